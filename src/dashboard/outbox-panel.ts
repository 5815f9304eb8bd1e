/**
 * @module The dashboard's outbox panel on the server: the outbox table's backlog by topic and its dead letters, and
 * a history of backlog samples kept by this process, since the outbox keeps none of its own.
 */
import type { Pool } from 'pg';
import { outboxStats } from '../messaging/outbox/maintenance.js';
import { outboxTable } from '../messaging/outbox/table.js';
import type { BacklogSample, DeadLetterRow, OutboxPanel, TopicRow } from './model.js';
import { dashboardSql } from './sql.js';

type Row = Readonly<Record<string, unknown>>;

export interface OutboxTarget {
  readonly pool: Pool;
  readonly schema: string;
  /** `"schema".oncely_outbox`. */
  readonly table: string;
}

/** Validates the outbox's schema once (the same rule as every outbox function). */
export function outboxTarget(pool: Pool, schema: string | undefined): OutboxTarget {
  const table = outboxTable(schema);
  return { pool, schema: table.schema, table: table.name };
}

/**
 * A ring of backlog samples, one per refresh of this dashboard process: the outbox keeps no history of its own,
 * so the chart covers the time this process has been looking (at most `capacity` refreshes).
 */
export class BacklogHistory {
  readonly #samples: BacklogSample[] = [];
  constructor(readonly capacity: number) {}

  add(sample: BacklogSample): void {
    this.#samples.push(sample);
    if (this.#samples.length > this.capacity) this.#samples.splice(0, this.#samples.length - this.capacity);
  }

  get samples(): readonly BacklogSample[] {
    return [...this.#samples];
  }
}

/** Null when the outbox table does not exist (yet): not an error, the application may not use the outbox. */
export async function readOutbox(
  target: OutboxTarget,
  history: BacklogHistory,
  listLimit: number,
): Promise<OutboxPanel | null> {
  const { rows } = await target.pool.query<{ found: string | null }>(
    'SELECT to_regclass($1)::text AS found',
    [target.table],
  );
  if (rows[0]?.found == null) return null;
  const [stats, topics, dead] = await Promise.all([
    outboxStats(target.pool, { schema: target.schema }),
    target.pool.query<Row>(dashboardSql.outboxTopics(target.table), [listLimit]),
    target.pool.query<Row>(dashboardSql.deadLetters(target.table), [listLimit]),
  ]);
  history.add({
    at: Date.now(),
    pending: stats.pending,
    dead: stats.dead,
    lagMs: stats.oldestPendingAgeMs,
  });
  return {
    pending: stats.pending,
    inFlight: stats.inFlight,
    retrying: stats.retrying,
    published: stats.published,
    dead: stats.dead,
    lagMs: stats.oldestPendingAgeMs,
    topics: topics.rows.map(topicOf),
    deadLetters: dead.rows.map(deadLetterOf),
    history: history.samples,
  };
}

const text = (value: unknown) => (value === null || value === undefined ? null : String(value));

function topicOf(row: Row): TopicRow {
  return {
    topic: String(row.topic),
    pending: Number(row.pending),
    inFlight: Number(row.in_flight),
    retrying: Number(row.retrying),
    dead: Number(row.dead),
    lagMs: Math.round(Number(row.lag_ms)),
    oldestPending:
      row.oldest_id === null || row.oldest_id === undefined
        ? null
        : {
            id: String(row.oldest_id),
            key: text(row.oldest_key),
            createdAt: Math.round(Number(row.oldest_created_ms)),
            attempts: Number(row.oldest_attempts),
            lastError: text(row.oldest_error),
          },
  };
}

function deadLetterOf(row: Row): DeadLetterRow {
  return {
    id: String(row.id),
    topic: String(row.topic),
    key: text(row.key),
    attempts: Number(row.attempts),
    createdAt: Math.round(Number(row.created_ms)),
    deadAt: Math.round(Number(row.dead_ms)),
    lastError: text(row.last_error),
  };
}
