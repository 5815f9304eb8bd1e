/**
 * @module The event log on PostgreSQL: its tables created, a batch written in one statement, and the events panel
 * read back.
 */
import { quoteIdentifier } from '../../core/sql-names.js';
import type { EventRow, EventsPanel } from '../model.js';
import type { ResolvedSource } from '../source.js';
import { dashboardSql } from '../sql.js';
import type { EventBatch } from './entry.js';

type PostgresSource = Extract<ResolvedSource, { kind: 'postgres' }>;
type Row = Readonly<Record<string, unknown>>;

const names = (source: PostgresSource) => ({ events: source.eventsTable, counts: source.countsTable });

/** Creates the event log's tables in the source's schema when missing (idempotent). */
export async function migrateEvents(source: PostgresSource): Promise<void> {
  await source.pool.query(
    dashboardSql.eventsSchema({ schema: quoteIdentifier(source.schema), ...names(source) }),
  );
}

/** One statement per flush: the notable events, the counts, and the trims (see sql/events-flush.sql). */
export async function flushToPostgres(source: PostgresSource, batch: EventBatch): Promise<void> {
  const buckets: number[] = [];
  const types: string[] = [];
  const counts: number[] = [];
  for (const [bucket, byType] of batch.counts) {
    for (const [type, count] of byType) {
      buckets.push(bucket);
      types.push(type);
      counts.push(count);
    }
  }
  await source.pool.query(dashboardSql.eventsFlush(names(source)), [
    batch.events.map((e) => e.at),
    batch.events.map((e) => e.type),
    batch.events.map((e) => e.key),
    batch.events.map((e) => e.detail),
    buckets,
    types,
    counts,
    batch.at - batch.countsRetentionMs,
    batch.keep,
  ]);
}

export async function readFromPostgres(
  source: PostgresSource,
  recent: number,
  buckets: readonly number[],
): Promise<Omit<EventsPanel, 'bucketMs'>> {
  const { rows: found } = await source.pool.query<{ found: string | null }>(
    'SELECT to_regclass($1)::text AS found',
    [source.eventsTable],
  );
  if (found[0]?.found == null) return { available: false, recent: [], rates: emptyRates(buckets) };
  const { rows } = await source.pool.query<Row>(dashboardSql.eventsRead(names(source)), [
    recent,
    buckets[0] ?? 0,
  ]);
  const recentRows: EventRow[] = [];
  const byBucket = new Map<number, Record<string, number>>();
  for (const row of rows) {
    if (row.kind === 'event') {
      recentRows.push({
        at: Number(row.at_ms),
        type: String(row.type),
        key: row.key === null ? null : String(row.key),
        detail: String(row.detail),
      });
    } else {
      const at = Number(row.at_ms);
      const counts = byBucket.get(at) ?? {};
      counts[String(row.type)] = Number(row.n);
      byBucket.set(at, counts);
    }
  }
  return {
    available: true,
    recent: recentRows,
    rates: buckets.map((at) => ({ at, counts: byBucket.get(at) ?? {} })),
  };
}

function emptyRates(buckets: readonly number[]) {
  return buckets.map((at) => ({ at, counts: {} }));
}
