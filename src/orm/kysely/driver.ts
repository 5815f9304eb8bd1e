/**
 * @module oncely's SQL driver on a Kysely instance (PostgreSQL dialect): statements in autocommit on its pool, and
 * transactions opened through Kysely's own `db.transaction().setIsolationLevel(…).execute(…)`, which commits when
 * the callback resolves, rolls back when it rejects, and refuses a COMMIT that the server answered with ROLLBACK.
 * Kysely has no transaction clock of its own, so the timeout is the lease's alone.
 */
import type { Kysely, Transaction } from 'kysely';
import { InvalidOptionsError } from '../../core/errors.js';
import type { SqlDriver } from '../driver.js';
import { kyselyTransactions, runStatements } from './handle.js';

/** The driver of a `KyselyStore`: `db` must be the `Kysely` instance itself, not one of its transactions. */
export function kyselyDriver<DB>(db: Kysely<DB>): SqlDriver<Transaction<DB>> {
  // `as unknown`: a check, not a narrowing (the predicate names Transaction, which would narrow db for good).
  if (!kyselyTransactions.is(db as unknown))
    throw new InvalidOptionsError('kysely: pass your Kysely instance as db');
  if (db.isTransaction) {
    // A Transaction cannot open transactions (Kysely throws); joining one is what store.join(trx) is for.
    throw new InvalidOptionsError(
      'kysely: db is a transaction; pass the Kysely instance, and store.join(trx) to join a transaction',
    );
  }
  return {
    kind: kyselyTransactions,
    // One statement after the other, each on whichever pooled connection Kysely gives it: each commits on its own.
    run: (statements) => runStatements(db, statements),
    transaction: (work, { isolation }) =>
      isolation === undefined
        ? db.transaction().execute(work)
        : db.transaction().setIsolationLevel(isolation).execute(work),
  };
}
