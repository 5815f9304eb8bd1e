import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, MemoryStore, type StoredOutcome } from '../../src/index.js';
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

  it('sweeps expired records', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock: clock.now, sweepIntervalMs: 0 });
    await completeKey(store, 'a');
    await store.begin({ key: 'b', fingerprint: 'f', leaseMs: 1_000, retentionMs: 120_000 });
    clock.advance(60_000);
    expect(store.sweep()).toBe(1);
    expect(store.size).toBe(1);
  });

  it('rejects bad options', () => {
    expect(() => new MemoryStore({ maxEntries: 0 })).toThrow(InvalidOptionsError);
    expect(() => new MemoryStore({ clock: 5 as never })).toThrow(/clock must be a function/);
    expect(() => new MemoryStore({ maxEntrys: 5 } as never)).toThrow(/unknown option/);
  });
});
