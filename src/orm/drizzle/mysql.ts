/**
 * @module Drizzle on MySQL / MariaDB (`drizzle-orm/mysql2` on a mysql2 pool) for oncely: its `MySqlTransaction`
 * objects, told from the db (a `MySqlDatabase`) by Drizzle's own class marks, and one statement per
 * `execute(text)`, which answers with mysql2's own `[result, fields]`: rows, an OK packet's affected rows, or a
 * CALL's result sets.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import { answerOf } from '../../stores/mysql/driver.js';
import type { MySqlAnswer, MySqlHandleKind, MySqlSqlDriver, TransactionOptions } from '../driver.js';
import type { DrizzleDatabaseLike, DrizzleTransactionOf } from './handle.js';
import { entityKindsOf } from './handle.js';

/** A Drizzle MySQL db or transaction: Drizzle's `MySqlDatabase` mark (transactions extend it) and its methods. */
export function isMySqlDrizzle(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const { execute, transaction } = value as Partial<Record<'execute' | 'transaction', unknown>>;
  if (typeof execute !== 'function' || typeof transaction !== 'function') return false;
  return entityKindsOf(value).includes('MySqlDatabase');
}

/** One statement through `execute` (a string goes to mysql2 as it is, with no parameters). */
async function queryMySql(db: DrizzleDatabaseLike, statement: string): Promise<MySqlAnswer> {
  const answer = await db.execute(statement);
  return answerOf(Array.isArray(answer) ? answer[0] : answer);
}

/** Drizzle's MySQL transactions (and, for `is`, its MySQL dbs, so `join(db)` is refused as outside a transaction). */
export const drizzleMySqlTransactions = {
  name: 'drizzle',
  is<Tx>(value: unknown): value is Tx {
    return isMySqlDrizzle(value);
  },
  /** True for a `MySqlTransaction` (a nested one too), false for the db; Drizzle keeps no state on either. */
  inTransaction<Tx>(handle: Tx): boolean {
    return (
      typeof handle === 'object' && handle !== null && entityKindsOf(handle).includes('MySqlTransaction')
    );
  },
  query<Tx>(handle: Tx, statement: string): Promise<MySqlAnswer> {
    return queryMySql(handle as DrizzleDatabaseLike, statement);
  },
};

/**
 * The driver on a Drizzle MySQL db. Refused: a db on a single mysql2 connection (Drizzle runs every transaction on
 * that one connection, so two requests' claims would share one transaction), and a session other than mysql2's
 * (PlanetScale's and TiDB's serverless drivers answer in other shapes, and were not tested).
 */
export function drizzleMySqlDriver<DB extends DrizzleDatabaseLike>(
  db: DB,
): MySqlSqlDriver<DrizzleTransactionOf<DB>> {
  if (drizzleMySqlTransactions.inTransaction(db)) {
    throw new InvalidOptionsError(
      'DrizzleStore: db is a transaction; pass the db, and store.join(tx) to join a transaction',
    );
  }
  const session = (db as { session?: unknown }).session;
  if (session !== null && typeof session === 'object') {
    if (!entityKindsOf(session).includes('MySql2Session')) {
      throw new InvalidOptionsError(
        'DrizzleStore: on MySQL, oncely runs on drizzle-orm/mysql2 (a mysql2 pool)',
      );
    }
    const client = (session as { client?: { getConnection?: unknown } }).client;
    if (typeof client?.getConnection !== 'function') {
      throw new InvalidOptionsError(
        'DrizzleStore: the db is on a single mysql2 connection, whose one connection every transaction would share; ' +
          'create it on a pool: drizzle({ client: mysql.createPool(…) })',
      );
    }
  }
  return {
    dialect: 'mysql',
    kind: drizzleMySqlTransactions as MySqlHandleKind<DrizzleTransactionOf<DB>>,
    query: (statement) => queryMySql(db, statement),
    transaction<T>(work: (handle: DrizzleTransactionOf<DB>) => Promise<T>, options: TransactionOptions) {
      return db.transaction(
        (tx) => work(tx as DrizzleTransactionOf<DB>),
        options.isolation === undefined ? undefined : { isolationLevel: options.isolation },
      );
    },
  };
}
