/**
 * @module The outbox on PostgreSQL: the `OutboxBackend` over a `pg` pool or client, each operation one statement of
 * ./sql (claims with `FOR UPDATE SKIP LOCKED`, settles fenced by the claim token, arrays through `unnest`).
 */
import type { ClaimedRow, DeadLetter, FailedRow, FailInput, OutboxBackend, OutboxStats } from './backend.js';
import { outboxStatements } from './sql.js';
import { outboxTable, type Queryable } from './table.js';

export function postgresBackend(
  db: Queryable,
  schema: string | undefined,
  topics: readonly string[] | undefined,
): OutboxBackend {
  const sql = outboxStatements(outboxTable(schema));
  const topicList = topics === undefined ? null : [...topics];
  return {
    dialect: 'postgres',
    async claim(batchSize, leaseMs, token) {
      const { rows } =
        topicList === null
          ? await db.query<ClaimedRow>(sql.claim, [batchSize, leaseMs, token])
          : await db.query<ClaimedRow>(sql.claimTopics, [batchSize, leaseMs, token, topicList]);
      return rows;
    },
    async published(ids, token, keep) {
      const result = await db.query(keep ? sql.markPublished : sql.deletePublished, [[...ids], token]);
      return result.rowCount ?? 0;
    },
    async fail({ ids, delays, errors, brokerUp, maxAttempts, token }: FailInput) {
      const { rows } = await db.query<{ id: string; state: number; attempts: number }>(sql.fail, [
        [...ids],
        [...delays],
        [...errors],
        brokerUp,
        maxAttempts,
        token,
      ]);
      return rows.map((row): FailedRow => ({ id: row.id, state: row.state, attempts: row.attempts }));
    },
    async giveBack(ids, token) {
      return (await db.query(sql.giveBack, [[...ids], token])).rowCount ?? 0;
    },
    async purgePublished(olderThanMs, batchSize) {
      return (await db.query(sql.purgePublished, [olderThanMs, batchSize, topicList])).rowCount ?? 0;
    },
    async stats(): Promise<OutboxStats> {
      const { rows } = await db.query<Record<string, string | number | null>>(sql.stats, [topicList]);
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
    },
    async listDeadLetters(after, topic, limit) {
      const { rows } = await db.query<{
        id: string;
        topic: string;
        key: string | null;
        payload: Buffer;
        content_type: string;
        headers: Record<string, string>;
        attempts: number;
        created_at: Date;
        dead_at: Date;
        last_error: string | null;
      }>(sql.listDeadLetters, [after, topic, limit]);
      return rows.map(
        (row): DeadLetter => ({
          id: row.id,
          topic: row.topic,
          key: row.key,
          payload: row.payload,
          contentType: row.content_type,
          headers: row.headers,
          attempts: row.attempts,
          createdAt: row.created_at,
          deadAt: row.dead_at,
          lastError: row.last_error,
        }),
      );
    },
    async replayDeadLetters({ ids, topic }) {
      const result = await db.query<{ count: number }>(sql.replayDeadLetters, [
        ids === null ? null : [...ids],
        topic,
      ]);
      return Number(result.rows[0]?.count ?? 0);
    },
    async discardDeadLetters({ ids, topic }) {
      const result = await db.query(sql.discardDeadLetters, [ids === null ? null : [...ids], topic]);
      return result.rowCount ?? 0;
    },
  };
}
