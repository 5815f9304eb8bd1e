import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, MemoryStore } from '../../src/index.js';
import type { StoredOutcome } from '../../src/store.js';
import { FakeClock } from '../../src/testing/index.js';

const outcome: StoredOutcome = {
  status: 200,
  headers: [],
  body: Buffer.from('x'),
  encoding: 'identity',
  storage: 'inline',
};
const lease = { leaseMs: 1_000, retentionMs: 60_000 };

async function completeKey(store: MemoryStore, key: string) {
  const r = await store.begin({ key, fingerprint: 'f', ...lease });
  if (r.kind !== 'acquired') throw new Error(`expected to acquire ${key}`);
  await store.complete({ key, token: r.token, outcome, retentionMs: 60_000 });
}

describe('MemoryStore bounds', () => {
  it('evicts the least recently used completed records past maxEntries, never in-progress ones', async () => {
    const store = new MemoryStore({ maxEntries: 3, sweepIntervalMs: 0 });
    await store.begin({ key: 'running-1', fingerprint: 'f', ...lease });
    await store.begin({ key: 'running-2', fingerprint: 'f', ...lease });
    await completeKey(store, 'done-a');
    await completeKey(store, 'done-b');
    // done-a was evicted to make room for done-b; the two in-progress records stay.
    expect(await store.get('done-a')).toBeUndefined();
    expect((await store.get('done-b'))?.state).toBe('completed');
    expect((await store.get('running-1'))?.state).toBe('inProgress');
    await store.begin({ key: 'running-3', fingerprint: 'f', ...lease });
    await store.begin({ key: 'running-4', fingerprint: 'f', ...lease });
    expect(store.size).toBe(5);
    await completeKey(store, 'done-c');
    expect(await store.stats()).toEqual({ records: 5, inProgress: 4, completed: 1, released: 0 });
  });

  it('a replay refreshes a record, so hot keys survive eviction', async () => {
    const store = new MemoryStore({ maxEntries: 2, sweepIntervalMs: 0 });
    await completeKey(store, 'hot');
    await completeKey(store, 'cold');
    expect((await store.begin({ key: 'hot', fingerprint: 'f', ...lease })).kind).toBe('replay');
    await completeKey(store, 'new');
    expect(await store.get('cold')).toBeUndefined();
    expect((await store.get('hot'))?.state).toBe('completed');
  });

  it('evicts in exact least-recently-used order over thousands of random completions, replays and releases', async () => {
    // Eviction resumes a kept iterator instead of starting over (see MemoryStore#evict); checked against a plain
    // LRU list, with in-progress records holding part of the cap as they come and go.
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            op: fc.constantFrom('complete', 'replay', 'hold', 'releaseHeld'),
            key: fc.integer({ min: 0, max: 60 }),
          }),
          { minLength: 200, maxLength: 1_500 },
        ),
        async (steps) => {
          const cap = 20;
          const store = new MemoryStore({ maxEntries: cap, sweepIntervalMs: 0 });
          const lru: string[] = []; // settled keys, least recently used first
          const held = new Map<string, number>(); // in-progress keys and their tokens
          const forget = (key: string) => {
            const at = lru.indexOf(key);
            if (at !== -1) lru.splice(at, 1);
          };
          const settle = (key: string) => {
            forget(key);
            lru.push(key);
            while (lru.length + held.size > cap && lru.length > 1) lru.shift();
          };
          for (const { op, key: n } of steps) {
            const key = `k${n}`;
            if (held.has(key)) {
              if (op === 'releaseHeld') {
                await store.release({ key, token: held.get(key)! });
                held.delete(key);
                settle(key);
              }
              continue;
            }
            const begun = await store.begin({ key, fingerprint: 'f', ...lease });
            if (begun.kind === 'replay') {
              forget(key);
              lru.push(key);
              continue;
            }
            if (begun.kind !== 'acquired') throw new Error(`unexpected ${begun.kind}`);
            forget(key);
            if (op === 'hold' || op === 'releaseHeld') {
              held.set(key, begun.token);
              continue;
            }
            await store.complete({ key, token: begun.token, outcome, retentionMs: 60_000 });
            settle(key);
          }
          for (let n = 0; n <= 60; n++) {
            const key = `k${n}`;
            const expected = held.has(key) || lru.includes(key);
            expect({ key, present: (await store.get(key)) !== undefined }).toEqual({
              key,
              present: expected,
            });
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('sweeps expired records', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock: clock.now, sweepIntervalMs: 0 });
    await completeKey(store, 'a');
    await store.begin({ key: 'b', fingerprint: 'f', leaseMs: 1_000, retentionMs: 120_000 });
    clock.advance(60_000);
    expect(store.sweep()).toBe(1);
    expect(store.size).toBe(1);
  });

  it('rejects bad options, naming them', () => {
    expect(() => new MemoryStore({ maxEntries: 0 })).toThrow(InvalidOptionsError);
    expect(() => new MemoryStore({ maxEntries: 0 })).toThrow(/maxEntries/);
    expect(() => new MemoryStore({ sweepIntervalMs: -1 })).toThrow(/sweepIntervalMs/);
    expect(() => new MemoryStore({ clock: 5 as never })).toThrow(/clock must be a function/);
    expect(() => new MemoryStore({ maxEntrys: 5 } as never)).toThrow(
      /MemoryStore: unknown option "maxEntrys"/,
    );
  });

  it('sweeps on its own every sweepIntervalMs, never with 0, and no more once closed', async () => {
    const records = async (store: MemoryStore) => {
      await completeKey(store, 'a');
      await store.begin({ key: 'b', fingerprint: 'f', leaseMs: 10, retentionMs: 10 });
    };
    const swept = new MemoryStore({ sweepIntervalMs: 20 });
    const lazy = new MemoryStore({ sweepIntervalMs: 0 });
    const closed = new MemoryStore({ sweepIntervalMs: 20 });
    for (const store of [swept, lazy, closed]) await records(store);
    await closed.close();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(swept.size).toBe(1);
    expect(lazy.size).toBe(2);
    expect(closed.size).toBe(2);
    await swept.close();
  });
});

describe('MemoryStore records', () => {
  it("are copies both ways: neither the caller's buffers nor what get returns can change a stored outcome", async () => {
    const store = new MemoryStore();
    const body = Buffer.from('original');
    const r = await store.begin({ key: 'k', fingerprint: 'f', ...lease });
    if (r.kind !== 'acquired') throw new Error(r.kind);
    await store.complete({ key: 'k', token: r.token, outcome: { ...outcome, body }, retentionMs: 60_000 });
    body.write('mutated!');
    const read = await store.get('k');
    expect(Buffer.from(read!.outcome!.body).toString()).toBe('original');
    read!.outcome!.body.fill(0);
    const replay = await store.begin({ key: 'k', fingerprint: 'f', ...lease });
    expect(replay.kind === 'replay' && Buffer.from(replay.outcome.body).toString()).toBe('original');
    expect((await store.get('missing'))?.outcome).toBeUndefined();
    await store.begin({ key: 'p', fingerprint: 'f', ...lease });
    expect(await store.get('p')).toMatchObject({ state: 'inProgress', outcome: undefined });
  });

  it('keep their creation time across a release and a new claim', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock: clock.now });
    const created = clock.now();
    const r = await store.begin({ key: 'k', fingerprint: 'f', ...lease });
    if (r.kind !== 'acquired') throw new Error(r.kind);
    clock.advance(500);
    await store.release({ key: 'k', token: r.token });
    await store.begin({ key: 'k', fingerprint: 'f', ...lease });
    expect((await store.get('k'))?.createdAt).toBe(created);
  });

  it('never evict the record just settled, even when it is the only one over the cap', async () => {
    const store = new MemoryStore({ maxEntries: 1 });
    await completeKey(store, 'a');
    await completeKey(store, 'b');
    await completeKey(store, 'c');
    expect(store.size).toBe(1);
    expect((await store.begin({ key: 'c', fingerprint: 'f', ...lease })).kind).toBe('replay');
    expect(await store.get('a')).toBeUndefined();
  });

  it('waitFor resolves false at once on abort, true when the key settles, and for a key nobody holds', async () => {
    const store = new MemoryStore();
    expect(await store.waitFor('free', { timeoutMs: 10_000 })).toBe(true);
    const r = await store.begin({ key: 'k', fingerprint: 'f', ...lease });
    if (r.kind !== 'acquired') throw new Error(r.kind);
    const controller = new AbortController();
    const aborted = store.waitFor('k', { timeoutMs: 10_000, signal: controller.signal });
    const settled = store.waitFor('k', { timeoutMs: 10_000 });
    const started = Date.now();
    controller.abort();
    expect(await aborted).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
    await store.release({ key: 'k', token: r.token });
    expect(await settled).toBe(true);
  });
});

describe('MemoryStore waiters and counts', () => {
  it("a waiter that was woken and aborted later does not unhook the key's next waiters", async () => {
    const store = new MemoryStore();
    const first = await store.begin({ key: 'k', fingerprint: 'f', ...lease });
    if (first.kind !== 'acquired') throw new Error(first.kind);
    const controller = new AbortController();
    const woken = store.waitFor('k', { timeoutMs: 10_000, signal: controller.signal });
    await store.release({ key: 'k', token: first.token });
    expect(await woken).toBe(true);
    // The key is claimed again and someone waits for it; the first waiter's signal aborts long after it returned.
    const second = await store.begin({ key: 'k', fingerprint: 'f', ...lease });
    if (second.kind !== 'acquired') throw new Error(second.kind);
    const next = store.waitFor('k', { timeoutMs: 2_000 });
    controller.abort();
    await store.complete({ key: 'k', token: second.token, outcome, retentionMs: 60_000 });
    expect(await next).toBe(true);
  });

  it('stats count completed and released records apart', async () => {
    const store = new MemoryStore({ sweepIntervalMs: 0 });
    await completeKey(store, 'done');
    const r = await store.begin({ key: 'let-go', fingerprint: 'f', ...lease });
    if (r.kind !== 'acquired') throw new Error(r.kind);
    await store.release({ key: 'let-go', token: r.token });
    await store.begin({ key: 'running', fingerprint: 'f', ...lease });
    expect(await store.stats()).toEqual({ records: 3, inProgress: 1, completed: 1, released: 1 });
  });

  it("is named 'memory' (in store errors and telemetry), and idempotent() shares one per process", async () => {
    const { sharedMemoryStore } = await import('../../src/stores/memory.js');
    expect(new MemoryStore().name).toBe('memory');
    expect(sharedMemoryStore()).toBeInstanceOf(MemoryStore);
    expect(sharedMemoryStore()).toBe(sharedMemoryStore());
  });
});
