import { describe, expect, it } from 'vitest';
import {
  Engine,
  type EngineOptions,
  isLeaseLostError,
  isStoreUnavailableError,
  MemoryStore,
  type OncelyEvent,
  type Outcome,
  type Store,
} from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { faulty, over } from './faulty-store.js';

// The events `onEvent` receives are the engine's public account of what it did: dashboards and
// alerts count them. Each case asserts the exact sequence a scenario produces, on a real MemoryStore.
const outcome: Outcome = {
  status: 201,
  headers: [['content-type', 'text/plain']],
  body: Buffer.from('done'),
};
const LEASE = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function recorded(store: Store, options: Partial<EngineOptions> = {}) {
  const events: OncelyEvent[] = [];
  const engine = new Engine({ store, leaseMs: LEASE, onEvent: (event) => events.push(event), ...options });
  return { engine, events, types: () => events.map((event) => event.type) };
}

describe('engine events', () => {
  it('a first run: acquired with token and attempt, then completed; a retry: replayed', async () => {
    const { engine, events } = recorded(new MemoryStore());
    const begun = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const { token } = begun.claim;
    await begun.claim.complete(outcome);
    expect(await engine.begin({ key: 'k', fingerprint: 'f' })).toMatchObject({ kind: 'replay' });
    expect(events).toEqual([
      { type: 'acquired', key: 'k', token, attempt: 1 },
      { type: 'completed', key: 'k', token },
      { type: 'replayed', key: 'k' },
    ]);
  });

  it('a duplicate in flight is a conflict with the time left on the lease; another payload a mismatch', async () => {
    const clock = new FakeClock();
    const { engine, events } = recorded(new MemoryStore({ clock: clock.now }));
    const begun = await engine.begin({ key: 'k', fingerprint: 'f' });
    clock.advance(1_000);
    expect(await engine.begin({ key: 'k', fingerprint: 'f' })).toEqual({
      kind: 'inProgress',
      retryAfterMs: LEASE - 1_000,
      attempt: 1,
    });
    expect(await engine.begin({ key: 'k', fingerprint: 'other' })).toEqual({ kind: 'mismatch' });
    expect(events.slice(1)).toEqual([
      { type: 'conflict', key: 'k', retryAfterMs: LEASE - 1_000 },
      { type: 'mismatch', key: 'k' },
    ]);
    if (begun.kind === 'acquired') await begun.claim.release();
  });

  it('a release says why: notKept by default, error when the code threw, disposed when left unsettled', async () => {
    const { engine, events } = recorded(new MemoryStore());
    const released = async (
      key: string,
      settle: (claim: import('../../src/index.js').Claim) => Promise<void>,
    ) => {
      const begun = await engine.begin({ key, fingerprint: 'f' });
      if (begun.kind !== 'acquired') throw new Error(begun.kind);
      await settle(begun.claim);
      return begun.claim.token;
    };
    const a = await released('a', (claim) => claim.release());
    const b = await released('b', (claim) => claim.release('error'));
    const c = await released('c', async (claim) => {
      await using held = claim;
      expect(held.settled).toBe(false);
    });
    await expect(
      engine.execute({
        key: 'd',
        fingerprint: 'f',
        run: async () => {
          throw new Error('boom');
        },
        settle: () => ({ keep: false }),
      }),
    ).rejects.toThrow('boom');
    const e = await engine.execute({
      key: 'e',
      fingerprint: 'f',
      run: async () => 1,
      settle: () => ({ keep: false }),
    });
    expect(e).toMatchObject({ kind: 'executed', stored: false });
    expect(events.filter((event) => event.type === 'released')).toEqual([
      { type: 'released', key: 'a', token: a, reason: 'notKept' },
      { type: 'released', key: 'b', token: b, reason: 'error' },
      { type: 'released', key: 'c', token: c, reason: 'disposed' },
      expect.objectContaining({ key: 'd', reason: 'error' }),
      expect.objectContaining({ key: 'e', reason: 'notKept' }),
    ]);
  });

  it('a takeover is reported as such; the old owner is fenced on complete and on release', async () => {
    const clock = new FakeClock();
    const { engine, events } = recorded(new MemoryStore({ clock: clock.now }));
    const first = await engine.begin({ key: 'k', fingerprint: 'f' });
    const other = await engine.begin({ key: 'j', fingerprint: 'f' });
    clock.advance(LEASE);
    const second = await engine.begin({ key: 'k', fingerprint: 'f' });
    const third = await engine.begin({ key: 'j', fingerprint: 'f' });
    if (first.kind !== 'acquired' || second.kind !== 'acquired' || other.kind !== 'acquired')
      throw new Error('expected claims');
    expect(second.claim).toMatchObject({ takeover: true, attempt: 2 });
    await expect(first.claim.complete(outcome)).rejects.toSatisfy(isLeaseLostError);
    await other.claim.release();
    const old = first.claim.token;
    expect(events.filter((event) => event.type === 'takeover' || event.type === 'fenced')).toEqual([
      { type: 'takeover', key: 'k', token: second.claim.token, attempt: 2 },
      expect.objectContaining({ type: 'takeover', key: 'j', attempt: 2 }),
      { type: 'fenced', key: 'k', token: old, operation: 'complete' },
      { type: 'fenced', key: 'j', token: other.claim.token, operation: 'release' },
    ]);
    expect(events.some((event) => event.type === 'completed' && event.token === old)).toBe(false);
    if (third.kind === 'acquired') await third.claim.release();
    await second.claim.release();
  });

  it('a renewal the store fences loses the claim: its signal aborts with LeaseLostError', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock: clock.now });
    const { engine, events } = recorded(store, { leaseMs: 30 });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', retentionMs: 60_000 });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const { signal, token } = begun.claim;
    // Another caller takes the key over in the store's time; the owner's next renewal is fenced.
    clock.advance(31);
    const taken = await store.begin({ key: 'k', fingerprint: 'f', leaseMs: 60_000, retentionMs: 60_000 });
    expect(taken.kind).toBe('acquired');
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(isLeaseLostError(signal.reason)).toBe(true);
    expect(events.slice(1)).toEqual([
      { type: 'fenced', key: 'k', token, operation: 'renew' },
      { type: 'leaseLost', key: 'k', token },
    ]);
  });

  it('a failing store call is a storeError naming the operation, and inspect goes through the same guard', async () => {
    const store = faulty(new MemoryStore());
    const { engine, events } = recorded(store, { breaker: false });
    store.fail.add('begin');
    await expect(engine.begin({ key: 'k', fingerprint: 'f' })).rejects.toSatisfy(isStoreUnavailableError);
    store.fail.add('get');
    await expect(engine.inspect('k')).rejects.toSatisfy(isStoreUnavailableError);
    store.fail.clear();
    expect(await engine.inspect('k')).toBeUndefined();
    expect(events.map((event) => event.type === 'storeError' && event.operation)).toEqual(['begin', 'get']);
  });

  it('complete, renew and release name their operation in storeError too, the read of a retried complete as get', async () => {
    const store = faulty(new MemoryStore());
    const { engine, events } = recorded(store, { breaker: false, leaseMs: 300 });
    const operations = () =>
      events.flatMap((event) => (event.type === 'storeError' ? [event.operation] : []));
    const first = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (first.kind !== 'acquired') throw new Error(first.kind);
    store.fail.add('renew');
    await expect.poll(operations, { interval: 5 }).toEqual(['renew']);
    store.fail.delete('renew');
    store.fail.add('release');
    await first.claim.release();
    store.fail.delete('release');
    expect(operations()).toEqual(['renew', 'release']);
    // A complete whose reply is lost is retried, found fenced, and read back (the read fails once, then passes).
    const second = await engine.begin({ key: 'j', fingerprint: 'f' });
    if (second.kind !== 'acquired') throw new Error(second.kind);
    store.loseReply.add('complete');
    store.fail.add('get');
    const completing = second.claim.complete(outcome);
    await expect.poll(operations, { interval: 5 }).toContain('get');
    store.fail.delete('get');
    await completing;
    expect(operations()).toEqual(['renew', 'release', 'complete', 'get']);
  });

  it('a begin answered after its timeout that did not claim the key is left alone: nothing to release', async () => {
    const inner = new MemoryStore();
    const slow = over(inner, 'slow', {
      begin: (input) => new Promise((resolve) => setTimeout(() => resolve(inner.begin(input)), 40)),
    });
    const held = await inner.begin({ key: 'k', fingerprint: 'f', leaseMs: LEASE, retentionMs: LEASE });
    if (held.kind !== 'acquired') throw new Error(held.kind);
    const { engine, types } = recorded(slow, { storeTimeoutMs: 10, breaker: false });
    await expect(engine.begin({ key: 'k', fingerprint: 'f' })).rejects.toSatisfy(isStoreUnavailableError);
    await sleep(80);
    // The late answer was "in progress": no release was sent, so nothing was fenced.
    expect(types()).toEqual(['storeError']);
    expect(await inner.get('k')).toMatchObject({ state: 'inProgress', token: held.token });
  });

  it('a begin answered after its timeout is released at once (reason late), so a retry is not locked out', async () => {
    const inner = new MemoryStore();
    let delayMs = 60;
    const slow = over(inner, 'slow', {
      begin: (input) => new Promise((resolve) => setTimeout(() => resolve(inner.begin(input)), delayMs)),
    });
    const { engine, events } = recorded(slow, { storeTimeoutMs: 10, breaker: false });
    await expect(engine.begin({ key: 'k', fingerprint: 'f' })).rejects.toSatisfy(isStoreUnavailableError);
    await expect.poll(() => inner.get('k').then((record) => record?.state)).toBe('released');
    expect(events.find((event) => event.type === 'released')).toMatchObject({ key: 'k', reason: 'late' });
    delayMs = 0;
    const retry = await engine.begin({ key: 'k', fingerprint: 'f' });
    expect(retry).toMatchObject({ kind: 'acquired', claim: { attempt: 2 } });
    if (retry.kind === 'acquired') await retry.claim.release();
  });

  it('an answer that comes after its timeout to a call other than begin is dropped quietly: no unhandled rejection', async () => {
    const inner = new MemoryStore();
    const slow = over(inner, 'slow', {
      get: (key) => new Promise((resolve) => setTimeout(() => resolve(inner.get(key)), 40)),
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { engine } = recorded(slow, { storeTimeoutMs: 10, breaker: false });
      await expect(engine.inspect('k')).rejects.toSatisfy(isStoreUnavailableError);
      await sleep(80);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
