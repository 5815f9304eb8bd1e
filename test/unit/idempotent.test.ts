import { describe, expect, it, vi } from 'vitest';
import {
  FingerprintMismatchError,
  InProgressError,
  InvalidKeyError,
  InvalidOptionsError,
  idempotent,
  isInvalidKeyError,
  jsonCodec,
  MemoryStore,
} from '../../src/index.js';

interface Order {
  id: string;
  amount: number;
}

describe('idempotent()', () => {
  it('runs once per key and replays an equal structured value', async () => {
    const store = new MemoryStore();
    const effect = vi.fn();
    const charge = idempotent(
      async (order: Order, { token }) => {
        effect(order.id);
        return { id: `pay_${order.id}`, at: new Date(0), tags: new Set(['a']), cents: 10n ** 20n, token };
      },
      { key: (order) => order.id, store, scope: 'charge' },
    );
    const first = await charge.execute({ id: 'o1', amount: 5 });
    const second = await charge.execute({ id: 'o1', amount: 5 });
    expect(effect).toHaveBeenCalledTimes(1);
    expect(first.replayed).toBe(false);
    expect(second.replayed).toBe(true);
    expect(second.value).toEqual(first.value);
    expect(second.value.at).toBeInstanceOf(Date);
    expect(second.value.cents).toBe(10n ** 20n);
  });

  it('concurrent duplicates: one runs, the rest get InProgressError, or wait and share its result', async () => {
    const store = new MemoryStore();
    const effect = vi.fn();
    const slow = async (order: Order) => {
      effect();
      await new Promise((resolve) => setTimeout(resolve, 30));
      return { id: `pay_${order.id}` };
    };
    const strict = idempotent(slow, { key: (o) => o.id, store, scope: 'pay' });
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => strict({ id: 'o1', amount: 5 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(
      results.filter((r) => r.status === 'rejected' && r.reason instanceof InProgressError),
    ).toHaveLength(49);

    const patient = idempotent(slow, { key: (o) => o.id, store, scope: 'pay', waitMs: 5_000 });
    const values = await Promise.all(Array.from({ length: 50 }, () => patient({ id: 'o2', amount: 5 })));
    expect(new Set(values.map((v) => v.id))).toEqual(new Set(['pay_o2']));
    expect(effect).toHaveBeenCalledTimes(2);
  });

  it('the same key with another input is a mismatch; key order does not matter', async () => {
    const charge = idempotent(async (order: Order) => order.amount, {
      key: (o) => o.id,
      store: new MemoryStore(),
      scope: 's',
    });
    await charge({ id: 'o1', amount: 5 });
    await expect(charge({ amount: 5, id: 'o1' })).resolves.toBe(5);
    await expect(charge({ id: 'o1', amount: 6 })).rejects.toBeInstanceOf(FingerprintMismatchError);
  });

  it('a malformed key is a typed InvalidKeyError, before anything runs', async () => {
    const fn = vi.fn(async () => 1);
    const wrapped = idempotent(fn, { key: (k: string) => k, store: new MemoryStore(), scope: 's' });
    for (const bad of ['', 'x'.repeat(256), 'tab\there', 'é']) {
      const error = await wrapped(bad).catch((e: unknown) => e);
      expect(isInvalidKeyError(error)).toBe(true);
      expect(error).toBeInstanceOf(InvalidKeyError);
    }
    expect(fn).not.toHaveBeenCalled();
  });

  it('a thrown error or a result not kept lets the next call run again', async () => {
    let calls = 0;
    const flaky = idempotent(
      async () => {
        calls++;
        if (calls === 1) throw new Error('transient');
        return { ok: calls > 2 };
      },
      { key: () => 'k', store: new MemoryStore(), scope: 'flaky', keep: (r) => r.ok },
    );
    await expect(flaky(undefined)).rejects.toThrow('transient');
    await expect(flaky(undefined)).resolves.toEqual({ ok: false });
    await expect(flaky(undefined)).resolves.toEqual({ ok: true });
    await expect(flaky(undefined)).resolves.toEqual({ ok: true });
    expect(calls).toBe(3);
  });

  it('a result the codec cannot store releases the key with a clear error', async () => {
    const store = new MemoryStore();
    const wrapped = idempotent(async () => ({ fn: () => 1 }), { key: () => 'k', store, scope: 'bad' });
    await expect(wrapped(undefined)).rejects.toBeInstanceOf(InvalidOptionsError);
    const records = await store.stats();
    expect(records.inProgress).toBe(0);
  });

  it('plain JSON codec for results other languages read', async () => {
    const store = new MemoryStore();
    const wrapped = idempotent(async () => ({ a: 1 }), {
      key: () => 'k',
      store,
      scope: 'json',
      codec: jsonCodec,
    });
    await wrapped(undefined);
    await expect(wrapped.execute(undefined)).resolves.toEqual({ value: { a: 1 }, replayed: true });
  });

  it('scopes keep functions apart and bad options throw at construction', async () => {
    const store = new MemoryStore();
    const a = idempotent(async () => 'a', { key: () => 'same', store, scope: 'a' });
    const b = idempotent(async () => 'b', { key: () => 'same', store, scope: 'b' });
    expect([await a(undefined), await b(undefined)]).toEqual(['a', 'b']);
    expect(() => idempotent(async () => 1, { key: () => 'k' } as never)).toThrow(/pass a scope/);
    expect(() => idempotent(async function named() {}, { key: 'k' } as never)).toThrow(
      /key must be a function/,
    );
    expect(() => idempotent(async function named() {}, { key: () => 'k', waitMs: -5 })).toThrow(
      InvalidOptionsError,
    );
  });
});
