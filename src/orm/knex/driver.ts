/**
 * @module oncely's SQL driver on a Knex instance (the `pg` client, or `mysql2` for MySQL / MariaDB): statements in
 * autocommit on its pool, and transactions opened through Knex's own `knex.transaction(fn, { isolationLevel })`,
 * which commits when `fn` resolves and rolls back when it rejects. Knex has no transaction clock of its own, so the
 * timeout is the lease's alone.
 */
import type { Knex } from 'knex';
import { InvalidOptionsError } from '../../core/errors.js';
import type { OrmDriver, RawRow } from '../driver.js';
import { knexTransactions, runBatch } from './handle.js';
import { isMySqlKnex, knexMySqlTransactions, queryMySql } from './mysql.js';

/**
 * What the `pg` client's connection tells of its transaction: the status of the server's last ReadyForQuery (since
 * `pg` 8.21; `E`: failed, so COMMIT rolls back), and whether that ReadyForQuery is the latest (nothing pending).
 */
interface TransactionStatus {
  getTransactionStatus?(): unknown;
  readonly readyForQuery?: unknown;
}

/** The driver of a `KnexStore`: `knex` must be the Knex instance itself, not a transaction. */
export function knexDriver(knex: Knex): OrmDriver<Knex.Transaction> {
  if (!knexTransactions.is(knex as unknown)) throw new InvalidOptionsError('knex: pass your Knex instance');
  if (knex.isTransaction === true) {
    // Its `transaction()` would open a savepoint, which oncely would take for a transaction of its own.
    throw new InvalidOptionsError(
      'knex: this is a transaction; pass the Knex instance, and store.join(trx) to join a transaction',
    );
  }
  if (isMySqlKnex(knex)) {
    return {
      dialect: 'mysql',
      kind: knexMySqlTransactions,
      // On whichever pooled connection Knex gives it: it commits on its own.
      query: (statement) => queryMySql(knex, statement),
      transaction: (work, options) =>
        knex.transaction(work, options.isolation === undefined ? {} : { isolationLevel: options.isolation }),
    };
  }
  // oncely's PostgreSQL statements go in batches, which need the `pg` client's one result per statement.
  const { dialect } = knex.client as { dialect?: unknown };
  if (dialect !== 'postgresql') {
    throw new InvalidOptionsError(
      `knex: the client's dialect is ${String(dialect)}; oncely needs the pg client (PostgreSQL) or mysql2 (MySQL)`,
    );
  }
  return {
    kind: knexTransactions,
    async run(statements: readonly string[]): Promise<RawRow[][]> {
      // One message per statement: several in one message would run as one implicit transaction, and here each
      // statement commits on its own.
      const results: RawRow[][] = [];
      for (const statement of statements) results.push(...(await runBatch(knex, [statement])));
      return results;
    },
    transaction<T>(
      work: (trx: Knex.Transaction) => Promise<T>,
      options: { isolation: Knex.IsolationLevels | undefined },
    ) {
      return knex.transaction(
        async (trx) => {
          const value = await work(trx);
          await refuseFailedTransaction(trx);
          return value;
        },
        options.isolation === undefined ? {} : { isolationLevel: options.isolation },
      );
    },
  };
}

/**
 * Throws when a statement failed earlier in the transaction (its error caught, the callback gone on): PostgreSQL
 * answers that transaction's COMMIT with ROLLBACK and no error, and Knex would resolve as if it had committed.
 * Throwing instead makes Knex roll back and reject. Read from the connection's last ReadyForQuery, so it costs no
 * round trip; a `pg` before 8.21 (no `getTransactionStatus`) or pg-native (which answers null) skips it.
 */
async function refuseFailedTransaction(trx: Knex.Transaction): Promise<void> {
  // A transaction's client hands out the transaction's own connection (the `pg` Client).
  const connection = (await trx.client.acquireConnection()) as TransactionStatus | null;
  const status = connection?.getTransactionStatus?.();
  if (status !== 'T' && status !== 'E') return;
  // A failed query's error reaches its caller before the server's ReadyForQuery, which may come in a later packet:
  // until it has, the status is the one before the failure. A statement sent now queues behind it, and fails in a
  // failed transaction (one round trip, only then).
  if (status === 'T' && connection?.readyForQuery !== true) {
    await trx.raw('SELECT 1').catch((error: unknown) => {
      throw failedTransaction(error);
    });
    return;
  }
  if (status === 'E') throw failedTransaction(undefined);
}

function failedTransaction(cause: unknown): Error {
  return new Error(
    'knex: a statement failed earlier in this transaction, so its COMMIT would roll back; it is rolled back',
    { cause },
  );
}
