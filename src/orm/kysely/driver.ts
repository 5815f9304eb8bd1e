/**
 * @module oncely's SQL driver on a Kysely instance (`PostgresDialect`, or `MysqlDialect` for MySQL / MariaDB, told
 * from the instance's adapter): statements in autocommit on its pool, and transactions opened through Kysely's own
 * `db.transaction().setIsolationLevel(…).execute(…)`, which commits when the callback resolves, rolls back when it
 * rejects, and refuses a COMMIT that the server answered with ROLLBACK. Kysely has no transaction clock of its
 * own, so the timeout is the lease's alone.
 */
import type { Kysely, Transaction } from 'kysely';
import { InvalidOptionsError } from '../../core/errors.js';
import type { MySqlHandleKind, OrmDriver, TransactionOptions } from '../driver.js';
import { kyselyTransactions, runStatements } from './handle.js';
import { isMySqlKysely, kyselyMySqlTransactions, queryMySql } from './mysql.js';

/** The driver of a `KyselyStore`: `db` must be the `Kysely` instance itself, not one of its transactions. */
export function kyselyDriver<DB>(db: Kysely<DB>): OrmDriver<Transaction<DB>> {
  // `as unknown`: a check, not a narrowing (the predicate names Transaction, which would narrow db for good).
  if (!kyselyTransactions.is(db as unknown))
    throw new InvalidOptionsError('kysely: pass your Kysely instance as db');
  if (db.isTransaction) {
    // A Transaction cannot open transactions (Kysely throws); joining one is what store.join(trx) is for.
    throw new InvalidOptionsError(
      'kysely: db is a transaction; pass the Kysely instance, and store.join(trx) to join a transaction',
    );
  }
  const transaction = <T>(work: (trx: Transaction<DB>) => Promise<T>, { isolation }: TransactionOptions) =>
    isolation === undefined
      ? db.transaction().execute(work)
      : db.transaction().setIsolationLevel(isolation).execute(work);
  if (isMySqlKysely(db)) {
    return {
      dialect: 'mysql',
      kind: kyselyMySqlTransactions as MySqlHandleKind<Transaction<DB>>,
      // On whichever pooled connection Kysely gives it: it commits on its own.
      query: (statement) => queryMySql(db, statement),
      transaction,
    };
  }
  return {
    kind: kyselyTransactions,
    // One statement after the other, each on whichever pooled connection Kysely gives it: each commits on its own.
    run: (statements) => runStatements(db, statements),
    transaction,
  };
}
