import { describe, expect, it } from 'vitest';
import { currentClaim, idempotent } from '../../src/decorators.js';
import {
  type ExecutionContext,
  isFingerprintMismatchError,
  isInProgressError,
  isInvalidOptionsError,
  MemoryStore,
  type Store,
} from '../../src/index.js';

// TypeScript 5 standard decorators: this file compiles under the repository's tsconfig, which has no
// experimentalDecorators (vitest's esbuild lowers them the same way).

interface Order {
  id: string;
  amount: number;
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('@idempotent (standard method decorator)', () => {
  it('runs once per key with its instance as this, replays an equal value, and hands the claim to the method', async () => {
    const store = new MemoryStore();
    const claims: ExecutionContext[] = [];
    class Payments {
      runs = 0;
      @idempotent({ scope: 'payments.charge', key: (order: Order) => order.id, store })
      async charge(order: Order) {
        this.runs++;
        claims.push(currentClaim()!);
        return { paid: order.amount, at: new Date(0) };
      }
    }
    const payments = new Payments();
    const first = await payments.charge({ id: 'o1', amount: 5 });
    const again = await payments.charge({ id: 'o1', amount: 5 });
    expect(payments.runs).toBe(1);
    expect(again).toEqual(first);
    expect(again.at).toBeInstanceOf(Date);
    expect(claims).toHaveLength(1);
    expect(typeof claims[0]?.token).toBe('number');
    expect(claims[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(currentClaim()).toBeUndefined();
    await payments.charge({ id: 'o2', amount: 5 });
    expect(payments.runs).toBe(2);
  });

  it('the same key with other arguments is refused; a fingerprint function says which arguments count', async () => {
    const store = new MemoryStore();
    class Ledger {
      runs = 0;
      @idempotent({ scope: 'ledger.credit', key: (id: string) => id, store })
      async credit(_id: string, cents: number) {
        this.runs++;
        return cents;
      }
      @idempotent({
        scope: 'ledger.note',
        key: (id: string) => id,
        fingerprint: (id: string) => id,
        store,
      })
      async note(_id: string, text: string) {
        this.runs++;
        return text;
      }
    }
    const ledger = new Ledger();
    await ledger.credit('c1', 10);
    expect(isFingerprintMismatchError(await ledger.credit('c1', 99).catch((error) => error))).toBe(true);
    expect(await ledger.note('n1', 'first')).toBe('first');
    expect(await ledger.note('n1', 'ignored')).toBe('first');
    expect(ledger.runs).toBe(2);
  });

  it('a thrown error is not stored: the next call runs again', async () => {
    class Flaky {
      runs = 0;
      @idempotent({ scope: 'flaky.run', key: (id: string) => id, store: new MemoryStore() })
      async run(id: string) {
        if (++this.runs === 1) throw new Error(`boom ${id}`);
        return this.runs;
      }
    }
    const flaky = new Flaky();
    await expect(flaky.run('k')).rejects.toThrow('boom k');
    expect(await flaky.run('k')).toBe(2);
    expect(await flaky.run('k')).toBe(2);
  });

  it('concurrent duplicates: InProgressError, or with waitMs the first result', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const store = new MemoryStore();
    class Slow {
      runs = 0;
      @idempotent({ scope: 'slow.conflict', key: (id: string) => id, store })
      async conflict(id: string) {
        this.runs++;
        await gate;
        return id;
      }
      @idempotent({ scope: 'slow.wait', key: (id: string) => id, store, waitMs: 5_000 })
      async wait(id: string) {
        this.runs++;
        await gate;
        return `${id}-${this.runs}`;
      }
    }
    const slow = new Slow();
    const first = slow.conflict('a');
    expect(isInProgressError(await slow.conflict('a').catch((error) => error))).toBe(true);
    const waited = [slow.wait('b'), slow.wait('b'), slow.wait('b')];
    release();
    expect(await first).toBe('a');
    const values = await Promise.all(waited);
    expect(new Set(values).size).toBe(1);
    expect(slow.runs).toBe(2);
  });

  it('a store per instance: each instance keeps its results in its own store', async () => {
    class Service {
      runs = 0;
      constructor(readonly store: Store) {}
      @idempotent({ scope: 'service.run', key: (id: string) => id, store: (self: Service) => self.store })
      async run(id: string) {
        return `${id}-${++this.runs}`;
      }
    }
    const shared = new MemoryStore();
    const one = new Service(shared);
    const two = new Service(new MemoryStore());
    const three = new Service(shared);
    expect(await one.run('k')).toBe('k-1');
    expect(await two.run('k')).toBe('k-1');
    expect(await three.run('k')).toBe('k-1'); // the record of `one`, in the store they share
    expect(three.runs).toBe(0);
    expect(
      await shared.get((await import('../../src/store.js')).scopedKey('fn:service.run', 'k')),
    ).toMatchObject({ state: 'completed' });
  });

  it('decorates static methods too', async () => {
    // biome-ignore lint/complexity/noStaticOnlyClass: a static method is what this test decorates.
    class Jobs {
      static runs = 0;
      @idempotent({ scope: 'jobs.nightly', key: (day: string) => day, store: new MemoryStore() })
      static async nightly(day: string) {
        return `${day}-${++Jobs.runs}`;
      }
    }
    expect(await Jobs.nightly('2024-01-01')).toBe('2024-01-01-1');
    expect(await Jobs.nightly('2024-01-01')).toBe('2024-01-01-1');
  });

  it('bad options throw where the decorator is written, never per call', () => {
    const key = (id: string) => id;
    // The message says what to do from the decorator's point of view, not from idempotent()'s underneath.
    const scopeMissing = /pass a scope \(a method decorator cannot see its class's name\)/;
    for (const [label, options, message] of [
      ['no scope', { key }, scopeMissing],
      ['an empty scope', { key, scope: '' }, scopeMissing],
      ['no key', { scope: 's' }, /key must be a function/],
      ['an unknown option', { key, scope: 's', retries: 3 }, /@idempotent: unknown option "retries"/],
      ['a lease under 10 ms', { key, scope: 's', leaseMs: 5 }, /leaseMs/],
      ['a store that is not one', { key, scope: 's', store: {} }, /store/],
    ] as const) {
      // As a class definition would apply it.
      const error = thrown(() =>
        idempotent(options as never)(async () => 1, { kind: 'method', name: 'run' } as never),
      );
      expect(isInvalidOptionsError(error), `${label}: ${String(error)}`).toBe(true);
      expect(String(error), label).toMatch(message);
    }
    const getter = thrown(() =>
      idempotent({ scope: 's', key })(async () => 1, { kind: 'getter', name: 'x' } as never),
    );
    expect(String(getter)).toMatch(/decorates methods only/);
  });

  it('types: the key takes the arguments of the method; only async methods', () => {
    const store = new MemoryStore();
    class Typed {
      @idempotent({ scope: 't.a', key: (order: Order) => order.id, store })
      async a(order: Order) {
        return order.amount;
      }
      // @ts-expect-error the method returns a value, not a promise: its replays could not be synchronous
      @idempotent({ scope: 't.b', key: (order: Order) => order.id, store })
      b(order: Order) {
        return order.amount;
      }
      // @ts-expect-error the key takes an Order, the method a string
      @idempotent({ scope: 't.c', key: (order: Order) => order.id, store })
      async c(id: string) {
        return id;
      }
    }
    expect(typeof new Typed().a).toBe('function');
  });
});
