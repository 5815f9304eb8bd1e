/**
 * @module Outbox housekeeping beside the relay: `purgePublished` removes kept rows in bounded batches, and
 * `outboxStats` counts rows by state for `oncely stats`, the dashboard and the gauges.
 */
import { knownOptions, wholeNumber } from '../../core/validate.js';
import { outboxStatements } from './sql.js';
import { outboxTable, type Queryable, type SchemaOptions } from './table.js';
import { type TopicsOptions, topicList } from './topics.js';

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
 * holds locks or keeps vacuum from cleaning up. Only needed with `keepPublishedMs > 0` (otherwise the relay
 * deletes rows as it publishes them); the relay calls it on its own every `purgeIntervalMs`.
 */
export async function purgePublished(db: Queryable, options: PurgePublishedOptions = {}): Promise<number> {
  knownOptions('purgePublished', options, ['schema', 'topics', 'olderThanMs', 'batchSize', 'maxBatches']);
  const sql = outboxStatements(outboxTable(options.schema)).purgePublished;
  const olderThanMs = wholeNumber('olderThanMs', options.olderThanMs, 0);
  const batchSize = wholeNumber('batchSize', options.batchSize, 1_000, { min: 1, max: 100_000 });
  const maxBatches = wholeNumber('maxBatches', options.maxBatches, 100, { min: 1 });
  const topics = topicList('purgePublished', options.topics) ?? null;
  let removed = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const result = await db.query(sql, [olderThanMs, batchSize, topics]);
    const count = result.rowCount ?? 0;
    removed += count;
    if (count < batchSize) break;
  }
  return removed;
}

/** What `outboxStats` reports (for `oncely stats` and dashboards). */
export interface OutboxStats {
  /** Rows not yet published: waiting, in flight or backing off. */
  readonly pending: number;
  /** Pending rows a relay holds right now. */
  readonly inFlight: number;
  /** Pending rows that failed at least once and wait for their retry. */
  readonly retrying: number;
  /** Published rows kept (with `keepPublishedMs > 0`) and not purged yet. */
  readonly published: number;
  readonly dead: number;
  /** Age of the oldest pending row, ms; 0 when none. The lag to watch. */
  readonly oldestPendingAgeMs: number;
  /** Most attempts among pending rows. */
  readonly maxAttempts: number;
  /**
   * How long the oldest running writing transaction of the cluster has been open, ms (0 when none). If it wrote
   * outbox events, it holds their keys: other writers of those keys wait for it, and its events wait for its commit.
   */
  readonly oldestTransactionAgeMs: number;
}

/** Counts rows by state (of `topics` only, when given). Scans the table: fine for dashboards, not for a hot path. */
export async function outboxStats(
  db: Queryable,
  options: SchemaOptions & TopicsOptions = {},
): Promise<OutboxStats> {
  const sql = outboxStatements(outboxTable(options.schema)).stats;
  const topics = topicList('outboxStats', options.topics) ?? null;
  const { rows } = await db.query<Record<string, string | number | null>>(sql, [topics]);
  const row = rows[0]!;
  const n = (value: string | number | null | undefined) => Math.round(Number(value ?? 0));
  return {
    pending: n(row.pending),
    inFlight: n(row.in_flight),
    retrying: n(row.retrying),
    published: n(row.published),
    dead: n(row.dead),
    oldestPendingAgeMs: n(row.oldest_ms),
    maxAttempts: n(row.max_attempts),
    oldestTransactionAgeMs: n(row.oldest_tx_ms),
  };
}
