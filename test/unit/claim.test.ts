import { describe, expect, it, vi } from 'vitest';
import {
  ClaimSettledError,
  Engine,
  LeaseLostError,
  MemoryStore,
  type OncelyEvent,
  type Outcome,
  type Store,
} from '../../src/index.js';
import { faulty, over } from './faulty-store.js';

const outcome = (text: string): Outcome => ({ status: 201, headers: [], body: Buffer.from(text) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function acquire(engine: Engine, key = 'k') {
  const begun = await engine.begin({ key, fingerprint: 'f' });
  if (begun.kind !== 'acquired') throw new Error(`expected acquired, got ${begun.kind}`);
  return begun.claim;
}

describe('Claim', () => {
  it('is settled once: a second complete or a release after it is refused, and the stored outcome stays', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store });
    const claim = await acquire(engine);
    await claim.complete(outcome('first'));
    expect(claim.settled).toBe(true);
    await expect(claim.complete(outcome('second'))).rejects.toBeInstanceOf(ClaimSettledError);
    await expect(claim.release()).rejects.toBeInstanceOf(ClaimSettledError);
    await claim[Symbol.asyncDispose](); // settled: disposing changes nothing
    const again = await engine.begin({ key: 'k', fingerprint: 'f' });
    expect(again.kind).toBe('replay');
    if (again.kind !== 'replay' || !again.outcome.retained) throw new Error('expected a retained replay');
    expect(Buffer.from(again.outcome.outcome.body).toString()).toBe('first');
  });

  it('releases on dispose when neither complete nor release was called, so a retry runs', async () => {
    const events: OncelyEvent[] = [];
    const engine = new Engine({ store: new MemoryStore(), onEvent: (e) => events.push(e) });
    await (async () => {
      await using claim = await acquire(engine);
      expect(claim.settled).toBe(false);
      // leaves the scope unsettled, as code that threw would
    })();
    expect(events).toContainEqual(expect.objectContaining({ type: 'released', reason: 'disposed' }));
    const retry = await engine.begin({ key: 'k', fingerprint: 'f' });
    expect(retry.kind).toBe('acquired');
    if (retry.kind === 'acquired') expect(retry.claim.attempt).toBe(2);
  });

  it('knows its deadline from the moment begin was sent', async () => {
    const engine = new Engine({ store: new MemoryStore(), leaseMs: 5_000 });
    const before = Date.now();
    const claim = await acquire(engine);
    const after = Date.now();
    expect(claim.deadline).toBeGreaterThanOrEqual(before + 5_000);
    expect(claim.deadline).toBeLessThanOrEqual(after + 5_000);
    await claim.release();
  });

  it('aborts its signal by the deadline when renewals hang, even before any renewal has failed', async () => {
    const store = faulty(new MemoryStore());
    store.hang.add('renew');
    // The store timeout is far longer than the lease: a keeper that waits for a renewal to fail is too late.
    const engine = new Engine({ store, leaseMs: 150, storeTimeoutMs: 5_000 });
    const claim = await acquire(engine);
    const aborted = new Promise<number>((resolve) =>
      claim.signal.addEventListener('abort', () => resolve(Date.now())),
    );
    const abortedAt = await Promise.race([aborted, sleep(2_000).then(() => Number.POSITIVE_INFINITY)]);
    expect(abortedAt).toBeLessThanOrEqual(claim.deadline + 30);
    expect(claim.signal.reason).toBeInstanceOf(LeaseLostError);
  });

  it('a retried complete whose earlier attempt failed ends in LeaseLostError when another owner completed since', async () => {
    const memory = new MemoryStore();
    const store = faulty(memory);
    const owner = new Engine({ store, leaseMs: 20, breaker: false });
    const claim = await acquire(owner);
    store.fail.add('complete');
    const completing = claim.complete(outcome('stale owner'));
    const settled = completing.then(
      () => 'stored',
      (error: unknown) => error,
    );
    // The owner's lease runs out while its complete is retried; another caller takes over and completes.
    await sleep(60);
    const other = new Engine({ store: memory, leaseMs: 20 });
    const takeover = await acquire(other);
    expect(takeover.takeover).toBe(true);
    await takeover.complete(outcome('new owner'));
    store.fail.delete('complete');
    expect(await settled).toBeInstanceOf(LeaseLostError);
    const record = await memory.get('k');
    expect(Buffer.from(record!.outcome!.body).toString()).toBe('new owner');
  });
});

/** A MemoryStore whose renewals wait for `answer()`, and which records each renewal's lease. */
function gatedRenewals(inner = new MemoryStore()) {
  const leases: number[] = [];
  const pending: (() => void)[] = [];
  let failNext = false;
  const store: Store = {
    name: 'gated',
    begin: (input) => inner.begin(input),
    complete: (input) => inner.complete(input),
    release: (input) => inner.release(input),
    renew: (input) => {
      leases.push(input.leaseMs);
      const fail = failNext;
      return new Promise((resolve, reject) =>
        pending.push(() => (fail ? reject(new Error('renewal lost')) : resolve(inner.renew(input)))),
      );
    },
    get: (key) => inner.get(key),
    delete: (key) => inner.delete(key),
  };
  return {
    store,
    leases,
    /** Answers the renewals sent so far. */
    answer: () => {
      for (const settle of pending.splice(0)) settle();
    },
    failRenewals: () => {
      failNext = true;
    },
  };
}

describe('Claim leases', () => {
  it('a renewal still in flight when the claim settles is the last: nothing renews, fences or aborts after', async () => {
    for (const failing of [false, true]) {
      const gated = gatedRenewals();
      if (failing) gated.failRenewals();
      const events: OncelyEvent[] = [];
      const engine = new Engine({ store: gated.store, leaseMs: 300, onEvent: (e) => events.push(e) });
      const claim = await acquire(engine);
      await vi.waitFor(() => expect(gated.leases).toHaveLength(1), { interval: 5 });
      await claim.complete(outcome('done'));
      // The renewal comes back after the complete: fenced (the record is completed now), or failed.
      gated.answer();
      await sleep(250);
      expect(gated.leases).toHaveLength(1);
      expect(claim.signal.aborted).toBe(false);
      // A renewal that failed is reported as a store error, nothing more.
      const expected = failing ? ['acquired', 'completed', 'storeError'] : ['acquired', 'completed'];
      expect(events.map((e) => e.type)).toEqual(expected);
    }
  });

  it('with leaseUntil, no lease reaches past it: the first is cut short, the claim is lost there, the key free', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, leaseMs: 30_000 });
    const sentAt = Date.now();
    const until = sentAt + 150;
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', leaseUntil: until });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const { claim } = begun;
    // The engine asks for `until - sentAt`; the store starts that lease on its own clock, which may read a
    // millisecond or two after the engine's: the store's end is `until` plus that gap, never a whole lease.
    const gap = Date.now() - sentAt;
    const record = await store.get('k');
    expect(record!.leaseUntil).toBeLessThanOrEqual(until + gap);
    expect(record!.leaseUntil).toBeGreaterThan(until - 100);
    expect(claim.deadline).toBeLessThanOrEqual(until);
    // No renewal is due for 10 s: the claim gives up at `until` all the same.
    const abortedAt = await new Promise<number>((resolve) =>
      claim.signal.addEventListener('abort', () => resolve(Date.now())),
    );
    expect(abortedAt).toBeGreaterThanOrEqual(claim.deadline);
    expect(abortedAt).toBeLessThan(until + 1_000);
    expect(claim.signal.reason).toBeInstanceOf(LeaseLostError);
    // The claim gives up at the engine's deadline, which may come the same gap before the store's lease end: the
    // key is free once the store's clock has passed that end.
    await sleep(Math.max(0, record!.leaseUntil + 1 - Date.now()));
    const next = await engine.begin({ key: 'k', fingerprint: 'f' });
    expect(next).toMatchObject({ kind: 'acquired', claim: { takeover: true, attempt: 2 } });
  });

  it('with leaseUntil, renewals ask only for the time left before it, and none is sent once it has passed', async () => {
    const gated = gatedRenewals();
    const engine = new Engine({ store: gated.store, leaseMs: 60 });
    const until = Date.now() + 100;
    const claim = await acquire(engine);
    await claim.release();
    const begun = await engine.begin({ key: 'j', fingerprint: 'f', leaseUntil: until });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const renewed = setInterval(gated.answer, 5);
    await sleep(250);
    clearInterval(renewed);
    expect(begun.claim.signal.aborted).toBe(true);
    expect(gated.leases.length).toBeGreaterThan(0);
    for (const lease of gated.leases) {
      expect(lease).toBeGreaterThan(0);
      expect(lease).toBeLessThanOrEqual(60);
    }
    // The renewals after the first are cut at `until`, so each asks for less than a whole lease.
    expect(Math.min(...gated.leases)).toBeLessThan(60);
  });

  it('a leaseUntil already past still claims the key, for 1 ms', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, leaseMs: 30_000 });
    const sent = Date.now();
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', leaseUntil: sent - 5_000 });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const record = await store.get('k');
    expect(record!.leaseUntil).toBeGreaterThanOrEqual(sent + 1);
    expect(record!.leaseUntil).toBeLessThanOrEqual(Date.now() + 1);
  });

  it('a retried complete that finds the key deleted meanwhile is a lost lease', async () => {
    const inner = new MemoryStore();
    let first = true;
    const store = over(inner, 'flaky', {
      // The first attempt never reaches the store, and the key is deleted before the retry.
      complete: async (input) => {
        if (!first) return inner.complete(input);
        first = false;
        await inner.delete(input.key);
        throw new Error('connection reset');
      },
    });
    const engine = new Engine({ store, breaker: false });
    const claim = await acquire(engine);
    await expect(claim.complete(outcome('x'))).rejects.toBeInstanceOf(LeaseLostError);
    expect(await inner.get('k')).toBeUndefined();
  });
});
