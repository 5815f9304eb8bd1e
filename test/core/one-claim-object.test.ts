/**
 * @module The claim on a plain store is one object: the claim, the keeper of its lease, and its entry in the
 * engine's renewal queue (the design that spares a new request the keeper, two options objects, a deadline record and
 * its closure). Held through the queue's own API: the claim itself is the entry that is armed, fired, renewed and
 * re-armed, and settling it marks that entry done, so the queue drops it unfired without being called.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeadlineQueue } from '../../src/core/deadline-queue.js';
import { publishEvent } from '../../src/core/diagnostics-publish.js';
import { StoreGuard } from '../../src/core/guarded-store.js';
import { LeasedClaim } from '../../src/core/leased-claim.js';
import { defaultEnvelopeOptions } from '../../src/core/record.js';
import { MemoryStore } from '../../src/index.js';

function claimOn(store: MemoryStore, renewals: DeadlineQueue, token: number) {
  const parts = {
    guard: new StoreGuard(store, { timeoutMs: 1_000, breaker: false }, publishEvent),
    envelope: defaultEnvelopeOptions,
    emit: publishEvent,
  };
  return new LeasedClaim(
    parts,
    { key: 'k', scope: 'POST /payments' },
    { token, attempt: 1, takeover: false },
    60_000,
    30_000,
    Date.now(),
    renewals,
  );
}

/** Key `k` claimed on a new MemoryStore under fake timers, and its claim in a renewal queue of 10 s. */
async function freshClaim() {
  vi.useFakeTimers();
  const store = new MemoryStore();
  const begun = await store.begin({ key: 'k', fingerprint: 'f', leaseMs: 30_000, retentionMs: 60_000 });
  if (begun.kind !== 'acquired') throw new Error(begun.kind);
  const renewals = new DeadlineQueue(10_000);
  return { store, begun, renewals, claim: claimOn(store, renewals, begun.token) };
}

/** Lets the promise jobs a renewal chains run out (no timer is involved: the store is in memory). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

describe('a claim on a plain store', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is its own entry in the renewal queue, from the claim until it is settled, and never fires after', async () => {
    const { store, begun, renewals, claim } = await freshClaim();
    expect(renewals.size).toBe(1);
    expect(claim.done).toBe(false);
    await claim.complete({ status: 201, headers: [], body: Buffer.from('{}') });
    // Settling marked the claim's entry done: the queue drops it when its time comes, without renewing.
    expect(claim.done).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    await settle();
    expect(renewals.size).toBe(0);
    expect(claim.signal.aborted).toBe(false);
    expect(await store.get('k')).toMatchObject({ state: 'completed', token: begun.token });
  });

  it('renews when its entry expires, and is back in the queue for the next renewal', async () => {
    const { store, renewals, claim } = await freshClaim();
    const before = (await store.get('k'))!.leaseUntil;
    await vi.advanceTimersByTimeAsync(10_000);
    await settle();
    expect(renewals.size, 'back in the queue').toBe(1);
    expect(claim.done).toBe(false);
    expect((await store.get('k'))!.leaseUntil).toBe(before + 10_000);
    await claim.release();
    expect(claim.done).toBe(true);
  });
});
