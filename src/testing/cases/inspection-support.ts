/**
 * @module What the inspection cases share: the store's inspector (a store without one fails them), a survey that
 * walks everything of one test, and records put into each state.
 */
import assert from 'node:assert/strict';
import type { StoreInspector, Survey, SurveyOptions } from '../../core/inspection.js';
import type { Store, StoredOutcome } from '../../core/store.js';
import { type Fixture, LEASE_MS, outcome, RETENTION_MS } from '../harness.js';

export const begin = { leaseMs: LEASE_MS, retentionMs: RETENTION_MS };

/** Far above any test backend's keyspace: a survey with it walks everything and is never truncated. */
export const EVERYTHING = 10_000_000;

export function inspectorOf(store: Store): StoreInspector {
  assert.ok(store.inspector, `${store.name} has no inspector (Store.inspector, see StoreInspector)`);
  return store.inspector;
}

/** A survey of this test's records only (its keys share a prefix), on a backend other tests may share. */
export function surveyOwn(fixture: Fixture, options: Partial<SurveyOptions> = {}): Promise<Survey> {
  return inspectorOf(fixture.store).survey({
    limit: 100,
    scanLimit: EVERYTHING,
    keyPrefix: fixture.key(''),
    ...options,
  });
}

export async function inProgress(store: Store, key: string, fingerprint = 'f1'): Promise<number> {
  const claim = await store.begin({ key, fingerprint, ...begin });
  assert.ok(claim.kind === 'acquired');
  return claim.token;
}

export async function completed(
  store: Store,
  key: string,
  stored: StoredOutcome = outcome(`body of ${key}`),
  fingerprint = 'f1',
): Promise<void> {
  const token = await inProgress(store, key, fingerprint);
  assert.deepEqual(await store.complete({ key, token, outcome: stored, retentionMs: RETENTION_MS }), {
    kind: 'ok',
  });
}

export async function released(store: Store, key: string): Promise<void> {
  const token = await inProgress(store, key);
  assert.deepEqual(await store.release({ key, token }), { kind: 'ok' });
}

export const keysOf = (rows: readonly { key: string }[]) => rows.map((row) => row.key);
