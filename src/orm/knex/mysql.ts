/**
 * @module Knex on MySQL / MariaDB (`client: 'mysql2'`) for oncely: the same `trx` objects as on PostgreSQL, and one
 * statement per raw query on their connection. As on PostgreSQL, the text reaches the driver through the query's
 * options (`options({ sql })`, which Knex's MySQL client spreads over the SQL it rendered), so Knex's `?` handling
 * never touches it, and what Knex shows as the query's SQL (its events, debug output, error messages) is a short
 * label, not the key's record written out as literals. Knex's raw query on MySQL answers with the driver's own
 * `[result, fields]`: rows, an OK packet's affected rows, or a CALL's result sets.
 */
import type { Knex } from 'knex';
import { answerOf, MYSQL2_QUERY } from '../../stores/mysql/driver.js';
import type { MySqlAnswer, MySqlHandleKind } from '../driver.js';
import { knexTransactions } from './handle.js';

/** Whether the Knex instance speaks MySQL: its client's dialect (`mysql2`, or the older `mysql`). */
export function isMySqlKnex(knex: Knex): boolean {
  return (knex.client as { dialect?: unknown }).dialect === 'mysql';
}

/** One statement on the object's connection (a transaction's own, or the pool's). */
export async function queryMySql(knex: Knex, statement: string): Promise<MySqlAnswer> {
  const answer: unknown = await knex.raw('oncely (1 statement)').options({ ...MYSQL2_QUERY, sql: statement });
  return answerOf(Array.isArray(answer) ? answer[0] : answer);
}

/** Knex's transactions on MySQL: recognized and checked as on PostgreSQL, queried one statement at a time. */
export const knexMySqlTransactions: MySqlHandleKind<Knex.Transaction> = {
  name: 'knex',
  is: knexTransactions.is,
  inTransaction: knexTransactions.inTransaction,
  query: queryMySql,
};
