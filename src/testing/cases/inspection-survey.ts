/**
 * @module Conformance of `StoreInspector.survey`: counts and lists by state, the order of each list, both bounds
 * (`limit` per list, `scanLimit` of work, with `truncated`), expiry and delete, and marked records.
 */
import assert from 'node:assert/strict';
import { type ConformanceOptions, LEASE_MS, RETENTION_MS, withStore } from '../harness.js';
import { completed, inProgress, keysOf, released, surveyOwn } from './inspection-support.js';

export function inspectionSurveyCases(options: ConformanceOptions): void {
  const { it } = options.harness;

  it(
    'inspector: a survey counts records by state and lists each state in its order',
    withStore(options, async (fixture) => {
      const { store, key, clock } = fixture;
      await inProgress(store, key('stuck'));
      clock.advance(1_000);
      await inProgress(store, key('fresh'));
      await completed(store, key('done-first'));
      clock.advance(1_000);
      await completed(store, key('done-last'));
      await released(store, key('given-up'));
      const survey = await surveyOwn(fixture);
      assert.deepEqual(survey.counts, {
        records: 5,
        inProgress: 2,
        completed: 2,
        released: 1,
        leaseExpired: 0,
      });
      assert.equal(survey.truncated, false);
      assert.deepEqual(keysOf(survey.lists.inProgress), [key('stuck'), key('fresh')]);
      assert.deepEqual(keysOf(survey.lists.completed), [key('done-last'), key('done-first')]);
      assert.deepEqual(keysOf(survey.lists.released), [key('given-up')]);
      const [stuck] = survey.lists.inProgress;
      assert.equal(stuck?.leaseLeftMs, LEASE_MS - 2_000);
      assert.equal(stuck?.state, 'inProgress');
      assert.equal(stuck?.fingerprint, 'f1');
      assert.equal(survey.lists.completed[0]?.status, 201);
      assert.equal(survey.lists.completed[0]?.completedAt, clock.now());
    }),
  );

  it(
    'inspector: limit bounds each list, never the counts; states picks the lists',
    withStore(options, async (fixture) => {
      const { store, key, clock } = fixture;
      for (const name of ['a', 'b', 'c']) {
        await completed(store, key(name));
        clock.advance(10);
      }
      await inProgress(store, key('d'));
      const survey = await surveyOwn(fixture, { limit: 2 });
      assert.equal(survey.counts.completed, 3);
      assert.deepEqual(keysOf(survey.lists.completed), [key('c'), key('b')]);
      const some = await surveyOwn(fixture, { states: ['inProgress'] });
      assert.deepEqual(keysOf(some.lists.inProgress), [key('d')]);
      assert.deepEqual(some.lists.completed, []);
      assert.equal(some.counts.completed, 3);
    }),
  );

  it(
    'inspector: scanLimit bounds the work; a walk stopped by it says truncated',
    withStore(options, async (fixture) => {
      const { store, key } = fixture;
      const total = 30;
      for (let i = 0; i < total; i++) await inProgress(store, key(`r${i}`));
      const bounded = await surveyOwn(fixture, { scanLimit: 3 });
      assert.equal(bounded.truncated, true);
      assert.ok(bounded.scanned <= 3, `scanned ${bounded.scanned} with a scanLimit of 3`);
      assert.ok(bounded.counts.records < total, 'a bounded walk found every record');
      const whole = await surveyOwn(fixture);
      assert.equal(whole.truncated, false);
      assert.equal(whole.counts.inProgress, total);
    }),
  );

  it(
    'inspector: a lease that ran out is counted; expired and deleted records are gone',
    withStore(options, async (fixture) => {
      const { store, key, clock } = fixture;
      await inProgress(store, key('old'));
      clock.advance(RETENTION_MS - 1_000);
      await inProgress(store, key('young'));
      await completed(store, key('deleted'));
      assert.equal(await store.delete(key('deleted')), true);
      let survey = await surveyOwn(fixture);
      assert.deepEqual(survey.counts, {
        records: 2,
        inProgress: 2,
        completed: 0,
        released: 0,
        leaseExpired: 1,
      });
      assert.ok((survey.lists.inProgress[0]?.leaseLeftMs ?? 0) < 0, 'the lease that ran out shows negative');
      clock.advance(1_000);
      survey = await surveyOwn(fixture);
      assert.deepEqual(keysOf(survey.lists.inProgress), [key('young')]);
      assert.equal(survey.counts.records, 1);
    }),
  );

  it(
    'inspector: a mark lists the completed records that carry it, apart',
    withStore(options, async (fixture) => {
      const { store, key, clock } = fixture;
      const mark = { fingerprint: 'inbox-message', header: ['oncely-inbox', 'parked'] as const };
      const markOutcome = {
        status: 0,
        headers: [mark.header],
        body: new Uint8Array(0),
        encoding: 'identity',
        storage: 'inline',
      } as const;
      await completed(store, key('parked'), markOutcome, mark.fingerprint);
      clock.advance(10);
      await completed(store, key('handled'), { ...markOutcome, headers: [] }, mark.fingerprint);
      await completed(store, key('other'), markOutcome, 'f1');
      const survey = await surveyOwn(fixture, { mark });
      assert.equal(survey.marked?.count, 1);
      assert.deepEqual(keysOf(survey.marked?.records ?? []), [key('parked')]);
      assert.equal(survey.counts.completed, 3);
      assert.equal((await surveyOwn(fixture)).marked, undefined);
    }),
  );
}
