import { describe, expect, expectTypeOf, it } from 'vitest';
import * as root from '../../src/index.js';
import {
  type Begun,
  type Claim,
  type ExecuteResult,
  type IdempotentFunction,
  idempotent,
  isInProgressError,
  MemoryStore,
  type OncelyEvent,
} from '../../src/index.js';
import * as storeEntry from '../../src/store.js';

// Checked by `npm run typecheck` (and so by `npm run lint`); at run time the expectTypeOf assertions are no-ops.
describe('public types', () => {
  it('idempotent() keeps the input and result types of the wrapped function', () => {
    const fn = idempotent(async (order: { id: string }) => ({ paid: true as const, id: order.id }), {
      key: (order) => order.id,
      scope: 'types',
      store: new MemoryStore(),
    });
    expectTypeOf(fn).toEqualTypeOf<IdempotentFunction<{ id: string }, { paid: true; id: string }>>();
    expectTypeOf(fn.execute).returns.resolves.toEqualTypeOf<{
      readonly value: { paid: true; id: string };
      readonly replayed: boolean;
    }>();
  });

  it('results are discriminated unions, and guards narrow unknown errors', () => {
    expectTypeOf<Extract<Begun, { kind: 'inProgress' }>['retryAfterMs']>().toEqualTypeOf<number>();
    expectTypeOf<Extract<Begun, { kind: 'acquired' }>['claim']>().toEqualTypeOf<Claim>();
    expectTypeOf<Claim['complete']>().returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf<Extract<ExecuteResult<string>, { kind: 'executed' }>['result']>().toEqualTypeOf<string>();
    expectTypeOf<OncelyEvent['type']>().toEqualTypeOf<
      | 'acquired'
      | 'takeover'
      | 'replayed'
      | 'conflict'
      | 'mismatch'
      | 'completed'
      | 'released'
      | 'fenced'
      | 'leaseLost'
      | 'storeError'
    >();
    const error: unknown = new Error('x');
    if (isInProgressError(error)) expectTypeOf(error.retryAfterMs).toEqualTypeOf<number>();
  });

  it('the store-author helpers are on oncely/store, not on the root (an application does not need them)', () => {
    const moved = [
      'actionFor',
      'canonicalJson',
      'fingerprintOf',
      'scopedKey',
      'validateKey',
      'MAX_KEY_LENGTH',
    ] as const;
    for (const name of moved) {
      expect(Object.keys(root)).not.toContain(name);
      expect(Object.keys(storeEntry)).toContain(name);
    }
    expectTypeOf(root).not.toHaveProperty('actionFor');
    expectTypeOf(root).not.toHaveProperty('canonicalJson');
    expectTypeOf(root).not.toHaveProperty('fingerprintOf');
    expectTypeOf(root).not.toHaveProperty('scopedKey');
    expectTypeOf(root).not.toHaveProperty('validateKey');
    expectTypeOf(root).not.toHaveProperty('MAX_KEY_LENGTH');
    expectTypeOf(storeEntry.scopedKey).toEqualTypeOf<(scope: string, key: string) => string>();
    expectTypeOf(storeEntry.MAX_KEY_LENGTH).toEqualTypeOf<number>();
  });
});
