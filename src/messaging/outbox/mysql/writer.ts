/**
 * @module `outbox.add` on MySQL / MariaDB: the events written with the caller's connection (a driver's, or an ORM's
 * transaction: orm-connection.ts) inside the caller's transaction, each ordering key locked first (in hash order) so a
 * key's events go out in commit order, and a connection outside any transaction refused before an event is written.
 */
import { createHash } from 'node:crypto';
import { InvalidOptionsError } from '../../../core/errors.js';
import { bind } from './bind.js';
import type { UserConnection } from './connection.js';
import { mysqlWriterStatements } from './statements.js';
import type { MySqlOutboxTables } from './table.js';

/** One event as the writer checked and encoded it (writer.ts). */
export interface EventRow {
  readonly topic: string;
  readonly key: string | null;
  readonly payload: Buffer;
  readonly contentType: string;
  /** A JSON object, as text. */
  readonly headers: string;
}

// The columns' sizes (sql/mysql/migrate.sql): checked here, because a server in a non-strict sql_mode would cut a
// longer value short instead of refusing it.
const MAX_TOPIC_BYTES = 1_024;
const MAX_KEY_BYTES = 65_535;
const MAX_CONTENT_TYPE_BYTES = 1_024;
const MAX_HEADERS_BYTES = 16_777_215;

/** The key's 16-byte hash: its lock row's primary key and the per-key order index. */
export const keyHashOf = (key: string): Buffer => createHash('sha256').update(key).digest().subarray(0, 16);

/**
 * Writes `rows` in order and resolves with their outbox ids. Round trips: one per distinct key (its lock, which also
 * reports whether a transaction is open) or one probe when no event has a key, then one insert per event.
 */
export async function addMySql(
  connection: UserConnection,
  tables: MySqlOutboxTables,
  rows: readonly EventRow[],
  operation: string,
): Promise<string[]> {
  const sql = mysqlWriterStatements(tables);
  const encoded = rows.map((row) => encode(row, operation));
  // Per key: how many events it gets here, so its lock hands out that many seqs at once.
  const counts = new Map<string, { hash: Buffer; count: number }>();
  for (const row of encoded) {
    if (row.hash === null) continue;
    const id = row.hash.toString('hex');
    const entry = counts.get(id) ?? { hash: row.hash, count: 0 };
    entry.count++;
    counts.set(id, entry);
  }
  // Hash order: two transactions writing overlapping keys lock them in one order and wait instead of deadlocking.
  const keys = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const first = keys[0];
  const checked =
    first === undefined
      ? await connection.run(sql.probe, [])
      : await run(connection, sql.lockKey, { hash: first[1].hash, count: first[1].count });
  // An event written outside a transaction would commit on its own, whatever became of the business writes. A key
  // lock taken in autocommit committed alone: it only skipped seqs, which order does not need.
  if (!checked.inTransaction) {
    throw new InvalidOptionsError(
      `outbox.${operation}: the ${connection.driver} connection is not inside a transaction; BEGIN (or beginTransaction()) first, and write your rows and the event through it`,
    );
  }
  for (const [, { hash, count }] of keys.slice(1)) await run(connection, sql.lockKey, { hash, count });
  const left = new Map([...counts].map(([id, { count }]) => [id, count]));
  const ids: string[] = [];
  for (const row of encoded) {
    let back = 0;
    if (row.hash !== null) {
      const id = row.hash.toString('hex');
      back = left.get(id)! - 1;
      left.set(id, back);
    }
    const values = {
      topic: row.topic,
      key: row.key,
      hash: row.hash,
      back,
      payload: row.payload,
      type: row.contentType,
      headers: row.headers,
    };
    ids.push((await run(connection, sql.insert, values, true)).insertId);
  }
  return ids;
}

function run(
  connection: UserConnection,
  statement: string,
  params: Parameters<typeof bind>[1],
  needsId = false,
) {
  const { sql, values } = bind(statement, params);
  return connection.run(sql, values, needsId);
}

function encode(row: EventRow, operation: string) {
  const topic = Buffer.from(row.topic, 'utf8');
  const key = row.key === null ? null : Buffer.from(row.key, 'utf8');
  const contentType = Buffer.from(row.contentType, 'utf8');
  const headers = Buffer.from(row.headers, 'utf8');
  const limit = (what: string, bytes: Buffer | null, max: number) => {
    if (bytes !== null && bytes.length > max)
      throw new InvalidOptionsError(`outbox.${operation}: ${what} is longer than ${max} bytes on MySQL`);
  };
  limit('topic', topic, MAX_TOPIC_BYTES);
  limit('key', key, MAX_KEY_BYTES);
  limit('contentType', contentType, MAX_CONTENT_TYPE_BYTES);
  limit('headers (as JSON)', headers, MAX_HEADERS_BYTES);
  return {
    topic,
    key,
    hash: row.key === null ? null : keyHashOf(row.key),
    payload: row.payload,
    contentType,
    headers,
  };
}
