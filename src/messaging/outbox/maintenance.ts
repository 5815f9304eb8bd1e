/**
 * @module Outbox housekeeping beside the relay: `purgePublished` removes kept rows in bounded batches, and
 * `outboxStats` counts rows by state for `oncely stats`, the dashboard and the gauges. Both take a `pg` pool or client
 * or a MySQL pool.
 */
import { knownOptions, wholeNumber } from '../../core/validate.js';
import type { OutboxStats } from './backend.js';
import { backendOf, type OutboxDatabase } from './dialect.js';
import type { SchemaOptions } from './table.js';
import { type TopicsOptions, topicList } from './topics.js';

export type { OutboxStats } from './backend.js';

export interface PurgePublishedOptions extends SchemaOptions, TopicsOptions {
  /** Only rows published at least this long ago. Default 0 (every published row). */
  readonly olderThanMs?: number;
  /** Rows per DELETE statement: each is its own short transaction. Default 1,000. */
  readonly batchSize?: number;
  /** Stop after this many statements (the next run continues). Default 100. */
  readonly maxBatches?: number;
}

/**
 * Removes published rows in bounded batches, oldest first, each batch its own statement, so no long transaction
 * holds locks or keeps vacuum (PostgreSQL) or InnoDB's purge (MySQL) from cleaning up. Only needed with
 * `keepPublishedMs > 0` (otherwise the relay deletes rows as it publishes them); the relay calls it on its own every
 * `purgeIntervalMs`.
 */
export async function purgePublished(
  db: OutboxDatabase,
  options: PurgePublishedOptions = {},
): Promise<number> {
  knownOptions('purgePublished', options, ['schema', 'topics', 'olderThanMs', 'batchSize', 'maxBatches']);
  const olderThanMs = wholeNumber('olderThanMs', options.olderThanMs, 0);
  const batchSize = wholeNumber('batchSize', options.batchSize, 1_000, { min: 1, max: 100_000 });
  const maxBatches = wholeNumber('maxBatches', options.maxBatches, 100, { min: 1 });
  const backend = backendOf(db, options.schema, topicList('purgePublished', options.topics));
  return purgeBatches(backend.purgePublished.bind(backend), olderThanMs, batchSize, maxBatches);
}

/** Batches of `purge` until one comes back short or `maxBatches` ran; resolves with the rows removed. */
export async function purgeBatches(
  purge: (olderThanMs: number, batchSize: number) => Promise<number>,
  olderThanMs: number,
  batchSize: number,
  maxBatches: number,
): Promise<number> {
  let removed = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const count = await purge(olderThanMs, batchSize);
    removed += count;
    if (count < batchSize) break;
  }
  return removed;
}

/** Counts rows by state (of `topics` only, when given). Scans the table: fine for dashboards, not for a hot path. */
export async function outboxStats(
  db: OutboxDatabase,
  options: SchemaOptions & TopicsOptions = {},
): Promise<OutboxStats> {
  return backendOf(db, options.schema, topicList('outboxStats', options.topics)).stats();
}
