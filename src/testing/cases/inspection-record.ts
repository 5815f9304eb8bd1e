/**
 * @module Conformance of `StoreInspector.record`: one record's view in each state, its outcome's metadata, and
 * the body only when asked for.
 */
import assert from 'node:assert/strict';
import { type ConformanceOptions, LEASE_MS, outcome, RETENTION_MS, withStore } from '../harness.js';
import { begin, completed, inProgress, inspectorOf, released, surveyOwn } from './inspection-support.js';

export function inspectionRecordCases(options: ConformanceOptions): void {
  const { it } = options.harness;

  it(
    'inspector: a completed record shows its outcome metadata, and its body only when asked',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const stored = {
        ...outcome('{"ok":true}', 200),
        headers: [['content-type', 'application/json']] as const,
      };
      await completed(store, k, stored);
      const inspector = inspectorOf(store);
      const view = await inspector.record(k);
      assert.ok(view);
      assert.equal(view.state, 'completed');
      assert.equal(view.completedAt, clock.now());
      assert.equal(view.expiresAt, clock.now() + RETENTION_MS);
      assert.equal(view.leaseLeftMs, undefined);
      assert.ok(view.outcome);
      assert.deepEqual(
        { ...view.outcome, headers: view.outcome.headers.map(([n, v]) => [n, v]) },
        {
          status: 200,
          headers: [['content-type', 'application/json']],
          bodyBytes: 11,
          encoding: 'identity',
          storage: 'inline',
        },
      );
      assert.equal('body' in view.outcome, false, 'a view carries no body unless asked');
      const withBody = await inspector.record(k, { body: true });
      assert.equal(Buffer.from(withBody?.outcome?.body ?? []).toString('utf8'), '{"ok":true}');
    }),
  );

  it(
    'inspector: records in progress and released show token, attempt and lease; a missing key is undefined',
    withStore(options, async ({ store, key, clock }) => {
      const token = await inProgress(store, key('running'), 'fp-running');
      clock.advance(1_000);
      const inspector = inspectorOf(store);
      const running = await inspector.record(key('running'));
      assert.ok(running);
      assert.equal(running.state, 'inProgress');
      assert.equal(running.fingerprint, 'fp-running');
      assert.equal(running.token, token);
      assert.equal(running.attempt, 1);
      assert.equal(running.leaseLeftMs, LEASE_MS - 1_000);
      assert.equal(running.outcome, undefined);
      await released(store, key('gone'));
      assert.equal((await inspector.record(key('gone')))?.state, 'released');
      assert.equal(await inspector.record(key('never')), undefined);
      assert.equal(await store.delete(key('running')), true);
      assert.equal(await inspector.record(key('running')), undefined);
    }),
  );

  it(
    'inspector: a label comes back in the survey and the view; a record without one has none',
    withStore(options, async (fixture) => {
      const { store, key } = fixture;
      await store.begin({ key: key('labelled'), fingerprint: 'f1', label: 'POST /payments', ...begin });
      await inProgress(store, key('plain'));
      const inspector = inspectorOf(store);
      assert.equal((await inspector.record(key('labelled')))?.label, 'POST /payments');
      assert.equal((await inspector.record(key('plain')))?.label, undefined);
      const listed = (await surveyOwn(fixture)).lists.inProgress;
      const labelOf = (k: string) => listed.find((row) => row.key === k)?.label;
      assert.equal(labelOf(key('labelled')), 'POST /payments');
      assert.equal(labelOf(key('plain')), undefined);
    }),
  );
}
