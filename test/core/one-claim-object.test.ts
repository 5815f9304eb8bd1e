/**
 * @module The claim on a plain store is one object: the claim, the keeper of its lease, and its entry in the
 * engine's renewal queue (the design that spares a new request the keeper, two options objects, a deadline record and
 * its closure). Held through the queue's own API: the claim itself is the entry that is added, renewed and removed.
 */
import { describe, expect, it } from 'vitest';
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

describe('a claim on a plain store', () => {
  it('is its own entry in the renewal queue, from the claim until it is settled', async () => {
    const store = new MemoryStore();
    const begun = await store.begin({ key: 'k', fingerprint: 'f', leaseMs: 30_000, retentionMs: 60_000 });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const renewals = new DeadlineQueue(10_000);
    const claim = claimOn(store, renewals, begun.token);
    expect(renewals.size).toBe(1);
    // The entry the queue holds is the claim: cancelling the claim finds it.
    expect(renewals.cancel(claim)).toBe(true);
    renewals.insert(claim);
    await claim.complete({ status: 201, headers: [], body: Buffer.from('{}') });
    expect(renewals.size).toBe(0);
    expect(renewals.cancel(claim)).toBe(false);
  });

  it('renews when its entry expires, and is back in the queue for the next renewal', async () => {
    const store = new MemoryStore();
    const begun = await store.begin({ key: 'k', fingerprint: 'f', leaseMs: 30_000, retentionMs: 60_000 });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const renewals = new DeadlineQueue(10_000);
    const claim = claimOn(store, renewals, begun.token);
    const before = (await store.get('k'))!.leaseUntil;
    renewals.cancel(claim);
    claim.onExpire();
    for (let i = 0; i < 100 && renewals.size === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(renewals.size, 'back in the queue').toBe(1);
    expect((await store.get('k'))!.leaseUntil).toBeGreaterThanOrEqual(before);
    await claim.release();
    expect(renewals.size).toBe(0);
  });
});
