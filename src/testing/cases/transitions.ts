/**
 * @module Conformance cases of the state machine on one key: every transition (begin, complete, release, renew, get,
 * delete) and its answers, with fencing of stale tokens.
 */
import assert from 'node:assert/strict';
import type { StoredOutcome } from '../../core/store.js';
import { type ConformanceOptions, LEASE_MS, outcome, RETENTION_MS, withStore } from '../harness.js';

const begin = { leaseMs: LEASE_MS, retentionMs: RETENTION_MS };

/** begin / complete / release / renew / get / delete on a single key, with fencing. */
export function transitionCases(options: ConformanceOptions): void {
  const { it } = options.harness;

  it(
    'begin on a new key acquires it with attempt 1 and records it in progress',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const result = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.equal(result.kind, 'acquired');
      assert.ok(result.kind === 'acquired');
      assert.equal(result.attempt, 1);
      assert.equal(result.takeover, false);
      assert.ok(Number.isSafeInteger(result.token) && result.token > 0);
      const record = await store.get(k);
      assert.ok(record);
      assert.equal(record.state, 'inProgress');
      assert.equal(record.fingerprint, 'f1');
      assert.equal(record.token, result.token);
      assert.equal(record.leaseUntil, clock.now() + LEASE_MS);
      assert.equal(record.expiresAt, clock.now() + RETENTION_MS);
    }),
  );

  it(
    'a duplicate begin while the lease is live reports inProgress with the time left',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      await store.begin({ key: k, fingerprint: 'f1', ...begin });
      clock.advance(4_000);
      const result = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.deepEqual(result, { kind: 'inProgress', retryAfterMs: LEASE_MS - 4_000, attempt: 1 });
    }),
  );

  it(
    'another fingerprint under the same key is a mismatch, in progress or completed',
    withStore(options, async ({ store, key }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      assert.deepEqual(await store.begin({ key: k, fingerprint: 'f2', ...begin }), { kind: 'mismatch' });
      await store.complete({ key: k, token: first.token, outcome: outcome('{}'), retentionMs: RETENTION_MS });
      assert.deepEqual(await store.begin({ key: k, fingerprint: 'f2', ...begin }), { kind: 'mismatch' });
    }),
  );

  it(
    'complete stores the outcome and a later begin replays it byte for byte',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      const body = new Uint8Array(256).map((_, i) => i);
      const stored: StoredOutcome = {
        status: 201,
        headers: [
          ['content-type', 'application/octet-stream'],
          ['link', '</a>'],
          ['link', '</b>'],
        ],
        body,
        encoding: 'br',
        storage: 'inline',
      };
      clock.advance(50);
      assert.deepEqual(
        await store.complete({ key: k, token: first.token, outcome: stored, retentionMs: RETENTION_MS }),
        { kind: 'ok' },
      );
      const completedAt = clock.now();
      clock.advance(10);
      const replay = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(replay.kind === 'replay', `expected replay, got ${replay.kind}`);
      assert.equal(replay.completedAt, completedAt);
      assert.equal(replay.outcome.status, 201);
      assert.deepEqual(
        replay.outcome.headers.map(([n, v]) => [n, v]),
        stored.headers.map(([n, v]) => [n, v]),
      );
      assert.deepEqual(Buffer.from(replay.outcome.body), Buffer.from(body));
      assert.equal(replay.outcome.encoding, 'br');
      assert.equal(replay.outcome.storage, 'inline');
      const record = await store.get(k);
      assert.equal(record?.state, 'completed');
      assert.equal(record?.expiresAt, completedAt + RETENTION_MS);
    }),
  );

  it(
    'an empty body and an outcome with no headers survive',
    withStore(options, async ({ store, key }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f', ...begin });
      assert.ok(first.kind === 'acquired');
      const empty: StoredOutcome = {
        status: 0,
        headers: [],
        body: new Uint8Array(0),
        encoding: 'identity',
        storage: 'omitted',
      };
      await store.complete({ key: k, token: first.token, outcome: empty, retentionMs: RETENTION_MS });
      const replay = await store.begin({ key: k, fingerprint: 'f', ...begin });
      assert.ok(replay.kind === 'replay');
      assert.equal(replay.outcome.status, 0);
      assert.deepEqual([...replay.outcome.headers], []);
      assert.equal(replay.outcome.body.byteLength, 0);
      assert.equal(replay.outcome.storage, 'omitted');
    }),
  );

  it(
    'complete, release and renew with a wrong token or on a missing key are fenced',
    withStore(options, async ({ store, key }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      const wrong = first.token + 1;
      const fenced = { kind: 'fenced' };
      assert.deepEqual(
        await store.complete({ key: k, token: wrong, outcome: outcome('x'), retentionMs: RETENTION_MS }),
        fenced,
      );
      assert.deepEqual(await store.release({ key: k, token: wrong }), fenced);
      assert.deepEqual(await store.renew({ key: k, token: wrong, leaseMs: LEASE_MS }), fenced);
      const missing = key('missing');
      assert.deepEqual(
        await store.complete({ key: missing, token: 1, outcome: outcome('x'), retentionMs: RETENTION_MS }),
        fenced,
      );
      assert.deepEqual(await store.release({ key: missing, token: 1 }), fenced);
      assert.deepEqual(await store.renew({ key: missing, token: 1, leaseMs: LEASE_MS }), fenced);
      assert.equal(await store.get(missing), undefined);
      assert.equal((await store.get(k))?.state, 'inProgress');
    }),
  );

  it(
    'a completed key cannot be completed, released or renewed again',
    withStore(options, async ({ store, key }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      await store.complete({
        key: k,
        token: first.token,
        outcome: outcome('one'),
        retentionMs: RETENTION_MS,
      });
      const { token } = first;
      assert.deepEqual(
        await store.complete({ key: k, token, outcome: outcome('two'), retentionMs: RETENTION_MS }),
        { kind: 'fenced' },
      );
      assert.deepEqual(await store.release({ key: k, token }), { kind: 'fenced' });
      assert.deepEqual(await store.renew({ key: k, token, leaseMs: LEASE_MS }), { kind: 'fenced' });
      const replay = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(replay.kind === 'replay');
      assert.equal(Buffer.from(replay.outcome.body).toString(), 'one');
    }),
  );

  it(
    'release frees the key for any request, with a higher token and the attempt counted',
    withStore(options, async ({ store, key }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      assert.deepEqual(await store.release({ key: k, token: first.token }), { kind: 'ok' });
      assert.equal((await store.get(k))?.state, 'released');
      const second = await store.begin({ key: k, fingerprint: 'f2', ...begin });
      assert.ok(second.kind === 'acquired');
      assert.ok(second.token > first.token, 'the fencing token must rise after a release');
      assert.equal(second.attempt, 2);
      assert.equal(second.takeover, false);
      assert.deepEqual(
        await store.complete({
          key: k,
          token: first.token,
          outcome: outcome('stale'),
          retentionMs: RETENTION_MS,
        }),
        { kind: 'fenced' },
      );
      assert.equal((await store.get(k))?.fingerprint, 'f2');
    }),
  );

  it(
    'delete removes a record in any state and fences its owner',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      assert.equal(await store.delete(k), true);
      assert.equal(await store.get(k), undefined);
      assert.equal(await store.delete(k), false);
      assert.deepEqual(
        await store.complete({
          key: k,
          token: first.token,
          outcome: outcome('x'),
          retentionMs: RETENTION_MS,
        }),
        { kind: 'fenced' },
      );
      clock.advance(1);
      const again = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(again.kind === 'acquired');
      // Tokens follow the store clock, so a record created anew still out-ranks every earlier claim.
      assert.ok(again.token > first.token);
      assert.deepEqual(
        await store.complete({
          key: k,
          token: first.token,
          outcome: outcome('x'),
          retentionMs: RETENTION_MS,
        }),
        { kind: 'fenced' },
      );
    }),
  );

  it(
    'keys are independent',
    withStore(options, async ({ store, key }) => {
      const a = await store.begin({ key: key('a'), fingerprint: 'f', ...begin });
      const b = await store.begin({ key: key('b'), fingerprint: 'f', ...begin });
      assert.equal(a.kind, 'acquired');
      assert.equal(b.kind, 'acquired');
    }),
  );
}
