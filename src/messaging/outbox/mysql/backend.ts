/**
 * @module The outbox on MySQL / MariaDB: the `OutboxBackend` over a `mysql2/promise` or `mariadb` pool. A claim is a
 * snapshot read of each key's head, then one short transaction that locks those rows (`FOR UPDATE SKIP LOCKED`) and
 * leases them; settles are fenced by the claim token; idle key rows are removed beside published ones.
 */
import type { Row } from '../../../stores/mysql/driver.js';
import { serverErrorOf } from '../../../stores/mysql/errors.js';
import type { FailedRow, FailInput, OutboxBackend, OutboxStats } from '../backend.js';
import { digits } from './bind.js';
import { mysqlDeadLetters } from './dead-letters.js';
import { claimedRowOf, idOf, numberOf } from './rows.js';
import { MySqlSession, runOn } from './session.js';
import { mysqlStatements } from './statements.js';
import { mysqlOutboxTables } from './table.js';

/**
 * Candidates read per claim: a batch and half a batch more. Relays claiming at the same moment read the same heads
 * and each skips the rows another has locked, so a second relay still finds rows of its own. Not more: when a
 * backlog holds fewer heads than this (a few keys with many rows each), the read walks the whole backlog.
 */
const candidatesFor = (batchSize: number) => batchSize + Math.ceil(batchSize / 2);
/** Key rows unused this long, whose key has nothing pending, are removed (purge-keys). */
export const KEY_IDLE_MS = 60_000;
// ER_SPECIFIC_ACCESS_DENIED_ERROR and ER_TABLEACCESS_DENIED_ERROR: INNODB_TRX needs the PROCESS privilege.
const ACCESS_DENIED = new Set([1227, 1142]);

export function mysqlBackend(
  pool: unknown,
  schema: string | undefined,
  topics: readonly string[] | undefined,
): OutboxBackend {
  const session = new MySqlSession(pool, 'outbox');
  const tables = mysqlOutboxTables(schema);
  const sql = mysqlStatements(tables, topics !== undefined);
  // Topics as the UTF-8 bytes the table stores.
  const topicParams = topics === undefined ? {} : { topics: topics.map((t) => Buffer.from(t, 'utf8')) };
  return {
    dialect: 'mysql',
    ...mysqlDeadLetters(session, sql),
    async claim(batchSize, leaseMs, token) {
      const scan = candidatesFor(batchSize);
      const heads = await session.run(sql.claimHeads, { scan, ...topicParams });
      if (heads.rows.length === 0) return [];
      const candidates = digits(heads.rows.map((row) => idOf(row.id)));
      return session.transaction(async (connection) => {
        const { rows } = await runOn(connection, sql.claimLock, { ids: candidates, batch: batchSize });
        if (rows.length === 0) return [];
        const ids = digits(rows.map((row) => idOf(row.id)));
        await runOn(connection, sql.claimLease, { ids, lease: leaseMs, token });
        return rows.map(claimedRowOf);
      });
    },
    async published(ids, token, keep) {
      const statement = keep ? sql.markPublished : sql.deletePublished;
      return (await session.run(statement, { ids: digits(ids), token })).affectedRows;
    },
    async fail({ ids, delays, errors, brokerUp, maxAttempts, token }: FailInput): Promise<FailedRow[]> {
      const index = new Map(ids.map((id, i) => [id, i]));
      return session.transaction(async (connection) => {
        const params = { ids: digits(ids), token, up: brokerUp ? 1 : 0, max: maxAttempts };
        const held = (await runOn(connection, sql.failHeld, params)).rows.map((row) => ({
          id: idOf(row.id),
          attempts: numberOf(row.attempts),
          dead: numberOf(row.dead) === 1,
        }));
        if (held.length === 0) return [];
        const at = held.map((row) => index.get(row.id)!);
        await runOn(connection, sql.fail, {
          ids: digits(held.map((row) => row.id)),
          delays: at.map((i) => delays[i]!),
          errors: at.map((i) => Buffer.from(errors[i]!, 'utf8')),
          dead: digits(held.filter((row) => row.dead).map((row) => row.id)),
        });
        return held.map((row) => ({ id: row.id, state: row.dead ? 2 : 0, attempts: row.attempts }));
      });
    },
    async giveBack(ids, token) {
      return (await session.run(sql.giveBack, { ids: digits(ids), token })).affectedRows;
    },
    async purgePublished(olderThanMs, batchSize) {
      const params = { older: olderThanMs, batch: batchSize, ...topicParams };
      const chosen = (await session.run(sql.purgeChosen, params)).rows;
      if (chosen.length === 0) return 0;
      const ids = digits(chosen.map((row) => idOf(row.id)));
      const removed = (await session.run(sql.purgePublished, { ids })).affectedRows;
      // A full batch chosen means more may be left, whatever another purge removed in between (purgeBatches stops
      // at a short batch).
      return chosen.length === batchSize ? batchSize : removed;
    },
    async purgeIdle(batchSize) {
      const idle = (await session.run(sql.idleKeys, { idle: KEY_IDLE_MS, batch: batchSize })).rows;
      if (idle.length === 0) return 0;
      const hashesOf = (rows: readonly Row[]) => rows.map((row) => row.key_hash as Buffer);
      return session.transaction(async (connection) => {
        const params = { hashes: hashesOf(idle), idle: KEY_IDLE_MS };
        const locked = (await runOn(connection, sql.lockIdleKeys, params)).rows;
        if (locked.length === 0) return 0;
        const unused = (await runOn(connection, sql.unusedKeys, { hashes: hashesOf(locked) })).rows;
        if (unused.length === 0) return 0;
        return (await runOn(connection, sql.forgetKeys, { hashes: hashesOf(unused) })).affectedRows;
      });
    },
    async stats(): Promise<OutboxStats> {
      const [row] = (await session.run(sql.stats, topicParams)).rows;
      return {
        pending: numberOf(row?.pending),
        inFlight: numberOf(row?.in_flight),
        retrying: numberOf(row?.retrying),
        published: numberOf(row?.published),
        dead: numberOf(row?.dead),
        oldestPendingAgeMs: Math.max(0, numberOf(row?.oldest_ms)),
        maxAttempts: numberOf(row?.max_attempts),
        oldestTransactionAgeMs: await oldestTransactionMs(session, sql.oldestTransaction),
      };
    },
  };
}

async function oldestTransactionMs(session: MySqlSession, statement: string): Promise<number> {
  try {
    const [row] = (await session.run(statement)).rows;
    return Math.max(0, numberOf(row?.oldest_tx_ms));
  } catch (error) {
    // Without the PROCESS privilege the rest of the stats still holds; the docs say this one reads 0 then.
    if (ACCESS_DENIED.has(serverErrorOf(error) ?? 0)) return 0;
    throw error;
  }
}
