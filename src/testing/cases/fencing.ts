/**
 * @module Conformance cases of fencing tokens: they rise strictly per key even across delete and expiry, so no token
 * of a key is ever handed out twice while an owner whose record is gone may still be running with it.
 */
import assert from 'node:assert/strict';
import type { Store } from '../../core/store.js';
import { type ConformanceOptions, LEASE_MS, outcome, RETENTION_MS, withStore } from '../harness.js';

const begin = { leaseMs: LEASE_MS, retentionMs: RETENTION_MS };
const fenced = { kind: 'fenced' };

/**
 * Tokens rise strictly per key for as long as anyone could hold an old one: across delete and expiry too, where
 * the record is gone but its owner may still be running. Each case works within one millisecond of the fake
 * clock (or with tokens ahead of it), where a token that only followed the clock would be handed out twice.
 */
export function fencingCases(options: ConformanceOptions): void {
  const { it } = options.harness;

  for (const state of ['inProgress', 'released', 'completed'] as const) {
    it(
      `delete of a ${state} record then a claim in the same millisecond: the old owner stays fenced`,
      withStore(options, async ({ store, key }) => {
        const k = key();
        const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
        assert.ok(first.kind === 'acquired');
        if (state === 'released') assert.deepEqual(await store.release({ key: k, token: first.token }), ok);
        if (state === 'completed') {
          const done = { key: k, token: first.token, outcome: outcome('first'), retentionMs: RETENTION_MS };
          assert.deepEqual(await store.complete(done), ok);
        }
        assert.equal(await store.delete(k), true);
        assert.equal(await store.get(k), undefined, 'a deleted record is gone');
        assert.equal(await store.delete(k), false, 'nothing left to delete');

        const second = await store.begin({ key: k, fingerprint: 'f2', ...begin });
        assert.ok(second.kind === 'acquired', `expected acquired, got ${second.kind}`);
        assert.ok(second.token > first.token, `token ${second.token} must be above ${first.token}`);
        assert.equal(second.attempt, 1, 'after a delete the key is new');
        assert.equal(second.takeover, false);

        await assertFenced(store, k, first.token);
        await assertOwner(store, k, second.token, 'f2');
      }),
    );
  }

  it(
    'an expired record whose token ran ahead of the clock: the next claim still out-ranks it',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const short = { leaseMs: 1, retentionMs: 1 };
      const first = await store.begin({ key: k, fingerprint: 'f', ...short });
      assert.ok(first.kind === 'acquired');
      assert.deepEqual(await store.release({ key: k, token: first.token }), ok);
      // Two claims in one millisecond: the second token is one above the clock.
      const second = await store.begin({ key: k, fingerprint: 'f', ...short });
      assert.ok(second.kind === 'acquired');
      assert.ok(second.token > first.token);
      clock.advance(1);
      assert.equal(await store.get(k), undefined, 'the record is past its retention');

      const third = await store.begin({ key: k, fingerprint: 'f2', ...begin });
      assert.ok(third.kind === 'acquired', `expected acquired, got ${third.kind}`);
      assert.ok(third.token > second.token, `token ${third.token} must be above ${second.token}`);
      assert.equal(third.attempt, 1, 'after expiry the key is new');

      await assertFenced(store, k, second.token);
      await assertOwner(store, k, third.token, 'f2');
    }),
  );

  it(
    'a takeover while tokens run ahead of the clock still raises the token: the old owner is fenced',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const short = { leaseMs: 1, retentionMs: RETENTION_MS };
      const first = await store.begin({ key: k, fingerprint: 'f', ...short });
      assert.ok(first.kind === 'acquired');
      assert.deepEqual(await store.release({ key: k, token: first.token }), ok);
      // Two claims in one millisecond: the second token is one above the clock, and its lease ends a ms later.
      const second = await store.begin({ key: k, fingerprint: 'f', ...short });
      assert.ok(second.kind === 'acquired' && second.token > first.token);
      clock.advance(1);

      const third = await store.begin({ key: k, fingerprint: 'f', ...begin });
      assert.ok(third.kind === 'acquired' && third.takeover, `expected a takeover, got ${third.kind}`);
      assert.ok(third.token > second.token, `token ${third.token} must be above ${second.token}`);
      await assertFenced(store, k, second.token);
      await assertOwner(store, k, third.token, 'f');
    }),
  );

  it(
    'purgeExpired (where the store has it) keeps the tombstone of a delete until the clock passes its token',
    withStore(options, async ({ store, key, clock }) => {
      if (store.purgeExpired === undefined) return;
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      assert.equal(await store.delete(k), true);
      assert.equal(typeof (await store.purgeExpired()), 'number');

      const second = await store.begin({ key: k, fingerprint: 'f2', ...begin });
      assert.ok(second.kind === 'acquired', `expected acquired, got ${second.kind}`);
      assert.ok(second.token > first.token, `token ${second.token} must be above ${first.token}`);
      await assertFenced(store, k, first.token);

      // Past its retention and its token, a record is purged: the key is new, its token still above.
      clock.advance(RETENTION_MS);
      assert.ok((await store.purgeExpired()) >= 1, 'the expired record is purged');
      assert.equal(await store.get(k), undefined);
      const third = await store.begin({ key: k, fingerprint: 'f3', ...begin });
      assert.ok(third.kind === 'acquired' && third.token > second.token && third.attempt === 1);
    }),
  );

  it(
    'an owner whose in-progress record outlived its retention is fenced, though nobody claimed the key since',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f', leaseMs: LEASE_MS, retentionMs: 20_000 });
      assert.ok(first.kind === 'acquired');
      clock.advance(20_000);
      await assertFenced(store, k, first.token);
      assert.equal(await store.get(k), undefined, 'a fenced call brings nothing back');
      const again = await store.begin({ key: k, fingerprint: 'f', ...begin });
      assert.ok(again.kind === 'acquired' && again.token > first.token && again.attempt === 1);
    }),
  );

  it(
    'a completed record is replayed for its whole retention, long after its lease time passed',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      clock.advance(1_000);
      assert.deepEqual(
        await store.complete({
          key: k,
          token: first.token,
          outcome: outcome('kept'),
          retentionMs: RETENTION_MS,
        }),
        ok,
      );
      const completedAt = clock.now();
      // The lease (10 s from the claim) ends long before the retention (60 s from the completion).
      assert.ok(RETENTION_MS > LEASE_MS * 2);
      for (const at of [LEASE_MS, LEASE_MS * 2, RETENTION_MS - 1]) {
        clock.advance(completedAt + at - clock.now());
        const replay = await store.begin({ key: k, fingerprint: 'f1', ...begin });
        assert.ok(replay.kind === 'replay', `at completion + ${at} ms: expected replay, got ${replay.kind}`);
        assert.equal(Buffer.from(replay.outcome.body).toString(), 'kept');
        assert.equal(replay.completedAt, completedAt);
        assert.deepEqual(await store.begin({ key: k, fingerprint: 'f2', ...begin }), { kind: 'mismatch' });
        const record = await store.get(k);
        assert.equal(record?.state, 'completed');
        assert.equal(record?.token, first.token);
      }
      clock.advance(1);
      assert.equal(await store.get(k), undefined, 'gone once the retention ends');
      const again = await store.begin({ key: k, fingerprint: 'f2', ...begin });
      assert.ok(again.kind === 'acquired' && again.token > first.token);
    }),
  );
}

const ok = { kind: 'ok' };

/** Every fenced transition of a stale owner is refused. */
async function assertFenced(store: Store, key: string, token: number): Promise<void> {
  assert.deepEqual(await store.renew({ key, token, leaseMs: LEASE_MS }), fenced, 'stale renew');
  assert.deepEqual(await store.release({ key, token }), fenced, 'stale release');
  const zombie = { key, token, outcome: outcome('zombie'), retentionMs: RETENTION_MS };
  assert.deepEqual(await store.complete(zombie), fenced, 'stale complete');
}

/** The current owner still holds the key and completes it; the replay is its outcome. */
async function assertOwner(store: Store, key: string, token: number, fingerprint: string): Promise<void> {
  const record = await store.get(key);
  assert.equal(record?.state, 'inProgress');
  assert.equal(record?.token, token);
  assert.equal(record?.fingerprint, fingerprint);
  assert.deepEqual(await store.renew({ key, token, leaseMs: LEASE_MS }), ok);
  const done = { key, token, outcome: outcome('current'), retentionMs: RETENTION_MS };
  assert.deepEqual(await store.complete(done), ok);
  const replay = await store.begin({ key, fingerprint, ...begin });
  assert.ok(replay.kind === 'replay', `expected replay, got ${replay.kind}`);
  assert.equal(Buffer.from(replay.outcome.body).toString(), 'current');
}
