/**
 * @module Conformance cases of time: a lease that runs out and is taken over (the old owner fenced), renewal that
 * keeps a live owner's key, and retention of completed and in-progress records.
 */
import assert from 'node:assert/strict';
import { type ConformanceOptions, LEASE_MS, outcome, RETENTION_MS, withStore } from '../harness.js';

const begin = { leaseMs: LEASE_MS, retentionMs: RETENTION_MS };

/** Leases, takeover after a crashed owner, renewal, and retention. */
export function expiryCases(options: ConformanceOptions): void {
  const { it } = options.harness;

  it(
    'after the lease runs out another caller takes over with a higher token; the old owner is fenced',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      clock.advance(LEASE_MS);
      const second = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(second.kind === 'acquired', `expected takeover, got ${second.kind}`);
      assert.equal(second.takeover, true);
      assert.equal(second.attempt, 2);
      assert.ok(second.token > first.token);
      const fenced = { kind: 'fenced' };
      assert.deepEqual(await store.renew({ key: k, token: first.token, leaseMs: LEASE_MS }), fenced);
      assert.deepEqual(
        await store.complete({
          key: k,
          token: first.token,
          outcome: outcome('zombie'),
          retentionMs: RETENTION_MS,
        }),
        fenced,
      );
      assert.deepEqual(await store.release({ key: k, token: first.token }), fenced);
      assert.deepEqual(
        await store.complete({
          key: k,
          token: second.token,
          outcome: outcome('real'),
          retentionMs: RETENTION_MS,
        }),
        { kind: 'ok' },
      );
      const replay = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(replay.kind === 'replay');
      assert.equal(Buffer.from(replay.outcome.body).toString(), 'real');
    }),
  );

  it(
    'a takeover keeps the original fingerprint: another payload is still a mismatch',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      await store.begin({ key: k, fingerprint: 'f1', ...begin });
      clock.advance(LEASE_MS + 1);
      assert.deepEqual(await store.begin({ key: k, fingerprint: 'f2', ...begin }), { kind: 'mismatch' });
    }),
  );

  it(
    'renew extends the lease so no one takes over a live owner',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      clock.advance(LEASE_MS - 1);
      assert.deepEqual(await store.renew({ key: k, token: first.token, leaseMs: LEASE_MS }), { kind: 'ok' });
      clock.advance(LEASE_MS - 1);
      const duplicate = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.deepEqual(duplicate, { kind: 'inProgress', retryAfterMs: 1, attempt: 1 });
      assert.equal((await store.get(k))?.leaseUntil, clock.now() + 1);
    }),
  );

  it(
    'an owner whose lease ran out but was not taken over still completes',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      clock.advance(LEASE_MS * 2);
      assert.deepEqual(await store.renew({ key: k, token: first.token, leaseMs: LEASE_MS }), { kind: 'ok' });
      assert.deepEqual(
        await store.complete({
          key: k,
          token: first.token,
          outcome: outcome('late'),
          retentionMs: RETENTION_MS,
        }),
        { kind: 'ok' },
      );
    }),
  );

  it(
    'a completed record replays until its retention ends, then the key is new again',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      await store.complete({ key: k, token: first.token, outcome: outcome('a'), retentionMs: 5_000 });
      clock.advance(4_999);
      assert.equal((await store.begin({ key: k, fingerprint: 'f1', ...begin })).kind, 'replay');
      clock.advance(1);
      assert.equal(await store.get(k), undefined);
      const again = await store.begin({ key: k, fingerprint: 'f2', ...begin });
      assert.ok(again.kind === 'acquired');
      assert.ok(again.token > first.token);
    }),
  );

  it(
    'an in-progress record is kept for its retention, then expires',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      await store.begin({ key: k, fingerprint: 'f1', leaseMs: LEASE_MS, retentionMs: 20_000 });
      clock.advance(19_999);
      assert.equal((await store.get(k))?.state, 'inProgress');
      clock.advance(1);
      assert.equal(await store.get(k), undefined);
      const again = await store.begin({ key: k, fingerprint: 'f2', ...begin });
      assert.ok(again.kind === 'acquired');
      assert.equal(again.attempt, 1);
    }),
  );

  it(
    'each completion carries its own retention',
    withStore(options, async ({ store, key, clock }) => {
      const short = key('short');
      const long = key('long');
      for (const [k, retentionMs] of [
        [short, 1_000],
        [long, 50_000],
      ] as const) {
        const r = await store.begin({ key: k, fingerprint: 'f', ...begin });
        assert.ok(r.kind === 'acquired');
        await store.complete({ key: k, token: r.token, outcome: outcome('x'), retentionMs });
      }
      clock.advance(1_000);
      assert.equal(await store.get(short), undefined);
      assert.equal((await store.get(long))?.state, 'completed');
    }),
  );
}
