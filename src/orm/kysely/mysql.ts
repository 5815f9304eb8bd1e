/**
 * @module Kysely on MySQL / MariaDB (`MysqlDialect` on a mysql2 pool) for oncely: the same `Transaction` objects as
 * on PostgreSQL, and one statement per query on their connection. Kysely's MySQL connection answers a write with its
 * affected rows (`numAffectedRows`) and a `CALL` with the driver's array of result sets, whose first is the one the
 * store reads. As on PostgreSQL, the queries run without the instance's plugins (a `CamelCasePlugin` would rename
 * the columns the store reads).
 */
import type { Transaction } from 'kysely';
import { insertIdOf } from '../../stores/mysql/driver.js';
import type { MySqlAnswer, MySqlHandleKind, RawRow } from '../driver.js';
import { type KyselyQueries, kyselyTransactions, rawQuery } from './handle.js';

/** The prototype chain's class names of Kysely's adapter: `MysqlAdapter` (or a dialect's own subclass of it). */
function adapterNames(db: object): string[] {
  const executor = (db as { getExecutor?: () => { adapter?: unknown } }).getExecutor?.();
  const names: string[] = [];
  for (let at: unknown = executor?.adapter; at !== null && typeof at === 'object'; ) {
    at = Object.getPrototypeOf(at);
    const name = (at as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    if (typeof name === 'string') names.push(name);
  }
  return names;
}

/** Whether the Kysely instance speaks MySQL: its dialect's adapter is Kysely's `MysqlAdapter`. */
export function isMySqlKysely(db: object): boolean {
  return adapterNames(db).includes('MysqlAdapter');
}

/** One statement on the object's connection (a transaction's own), without plugins. */
export async function queryMySql(db: KyselyQueries, statement: string): Promise<MySqlAnswer> {
  const result = await db.withoutPlugins().executeQuery(rawQuery(statement));
  const rows: readonly unknown[] = result.rows;
  // A CALL: the driver's result sets, then the CALL's own OK packet.
  const first = rows[0];
  const answer = {
    rows: (Array.isArray(first) ? first : rows) as RawRow[],
    affectedRows: Number(result.numAffectedRows ?? 0),
  };
  const insertId = insertIdOf(result.insertId);
  return insertId === undefined ? answer : { ...answer, insertId };
}

/** Kysely's transactions on MySQL: recognized and checked as on PostgreSQL, queried one statement at a time. */
export const kyselyMySqlTransactions = {
  name: 'kysely',
  is: kyselyTransactions.is,
  inTransaction: kyselyTransactions.inTransaction,
  query<DB>(trx: Transaction<DB>, statement: string): Promise<MySqlAnswer> {
    return queryMySql(trx, statement);
  },
} satisfies MySqlHandleKind<Transaction<unknown>>;
