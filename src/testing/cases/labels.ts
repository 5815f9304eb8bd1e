/**
 * @module Conformance cases of a record's label (`BeginInput.label`, `KeyRecord.label`): given by the claim that
 * creates the record, kept by every later transition, absent when none was given.
 */
import assert from 'node:assert/strict';
import { type ConformanceOptions, LEASE_MS, outcome, RETENTION_MS, withStore } from '../harness.js';

const begin = { leaseMs: LEASE_MS, retentionMs: RETENTION_MS };
// The longest label there is, with characters of two, three and four UTF-8 bytes: kept exactly, not cut at 200 bytes.
const LONG = `POST /zahlungen/:id ${'é€😀'.repeat(45)}`.slice(0, 200);

export function labelCases(options: ConformanceOptions): void {
  const { it } = options.harness;

  it(
    'a label given at begin comes back from get, through takeover and complete, unchanged by later begins',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin, label: 'POST /payments/:id' });
      assert.ok(first.kind === 'acquired');
      assert.equal((await store.get(k))?.label, 'POST /payments/:id');
      // A duplicate while the lease runs: in progress, label as it was.
      await store.begin({ key: k, fingerprint: 'f1', ...begin, label: 'POST /other' });
      assert.equal((await store.get(k))?.label, 'POST /payments/:id');
      clock.advance(LEASE_MS + 1);
      const takeover = await store.begin({ key: k, fingerprint: 'f1', ...begin, label: 'POST /other' });
      assert.ok(takeover.kind === 'acquired' && takeover.takeover, 'the lease ran out: a takeover');
      assert.equal((await store.get(k))?.label, 'POST /payments/:id', 'a takeover keeps the first label');
      await store.renew({ key: k, token: takeover.token, leaseMs: LEASE_MS });
      const stored = outcome('{"id":1}');
      await store.complete({ key: k, token: takeover.token, outcome: stored, retentionMs: RETENTION_MS });
      const done = await store.get(k);
      assert.equal(done?.state, 'completed');
      assert.equal(done?.label, 'POST /payments/:id', 'complete keeps the label');
      assert.deepEqual(Buffer.from(done.outcome!.body), Buffer.from(stored.body), 'the outcome is intact');
      const replay = await store.begin({ key: k, fingerprint: 'f1', ...begin, label: 'POST /other' });
      assert.ok(replay.kind === 'replay');
      assert.deepEqual(Buffer.from(replay.outcome.body), Buffer.from(stored.body));
      assert.equal((await store.get(k))?.label, 'POST /payments/:id');
    }),
  );

  it(
    'a claim after a release keeps the first label; a claim after the record is gone sets its own',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin, label: 'fn:charge' });
      assert.ok(first.kind === 'acquired');
      await store.release({ key: k, token: first.token });
      assert.equal((await store.get(k))?.label, 'fn:charge', 'release keeps the label');
      const second = await store.begin({ key: k, fingerprint: 'f2', ...begin, label: 'fn:refund' });
      assert.ok(second.kind === 'acquired' && second.attempt === 2);
      assert.equal((await store.get(k))?.label, 'fn:charge', 'the record continues: its label stays');
      await store.release({ key: k, token: second.token });
      clock.advance(RETENTION_MS + 1);
      const fresh = await store.begin({ key: k, fingerprint: 'f3', ...begin, label: 'fn:refund' });
      assert.ok(fresh.kind === 'acquired' && fresh.attempt === 1, 'a new record');
      assert.equal((await store.get(k))?.label, 'fn:refund');
    }),
  );

  it(
    'a record begun without a label has none, through takeover, complete and later labelled begins',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin });
      assert.ok(first.kind === 'acquired');
      assert.equal((await store.get(k))?.label, undefined);
      clock.advance(LEASE_MS + 1);
      const takeover = await store.begin({ key: k, fingerprint: 'f1', ...begin, label: 'POST /late' });
      assert.ok(takeover.kind === 'acquired' && takeover.takeover);
      assert.equal((await store.get(k))?.label, undefined, 'a later claim adds no label');
      await store.complete({
        key: k,
        token: takeover.token,
        outcome: outcome('{}'),
        retentionMs: RETENTION_MS,
      });
      const done = await store.get(k);
      assert.equal(done?.state, 'completed');
      assert.equal(done?.label, undefined);
      assert.equal(Buffer.from(done.outcome!.body).toString(), '{}');
    }),
  );

  it(
    'a label of 200 characters, multi-byte ones included, is kept exactly',
    withStore(options, async ({ store, key }) => {
      assert.equal(LONG.length, 200);
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f1', ...begin, label: LONG });
      assert.ok(first.kind === 'acquired');
      await store.complete({
        key: k,
        token: first.token,
        outcome: outcome('{}', 200),
        retentionMs: RETENTION_MS,
      });
      const done = await store.get(k);
      assert.equal(done?.label, LONG);
      assert.equal(done?.outcome?.status, 200, 'the outcome is read after the label, not from it');
    }),
  );
}
