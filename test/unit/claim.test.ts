import { describe, expect, it } from 'vitest';
import {
  ClaimSettledError,
  Engine,
  LeaseLostError,
  MemoryStore,
  type OncelyEvent,
  type Outcome,
} from '../../src/index.js';
import { faulty } from './faulty-store.js';

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
