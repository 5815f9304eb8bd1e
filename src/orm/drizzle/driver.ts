/**
 * @module The Drizzle driver: oncely's statements through the caller's Drizzle db (`drizzle-orm/node-postgres` or
 * `drizzle-orm/postgres-js`, or `drizzle-orm/mysql2` on MySQL / MariaDB: mysql.ts), and its transactions opened
 * with `db.transaction(fn, { isolationLevel })`, so the handler's `tx` is a plain Drizzle transaction with the
 * caller's schema. Drizzle has no transaction clock of its own, so the timeout is the lease's alone.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import type { OrmDriver, RawRow, TransactionOptions } from '../driver.js';
import { rowsPerStatement } from '../postgres-js/batch.js';
import { assertNoResultTransform, type TransformingSql } from '../postgres-js/driver.js';
import {
  type DrizzleDatabaseLike,
  type DrizzleTransactionOf,
  drizzleTransactions,
  entityKindsOf,
} from './handle.js';
import { drizzleMySqlDriver, isMySqlDrizzle } from './mysql.js';

/**
 * Refuses a db whose connection oncely cannot use safely, by what Drizzle connects through: a single pg `Client`
 * (Drizzle runs every transaction on that one connection, so two requests' claims would share one transaction and
 * one's rollback would undo the other's writes), and a postgres.js `sql` transforming results (oncely reads its
 * rows by the server's column names).
 */
function checkConnection(db: DrizzleDatabaseLike): void {
  const session = (db as { _?: { session?: unknown } })._?.session;
  if (session === null || typeof session !== 'object') return;
  const client = (session as { client?: unknown }).client;
  const kinds = entityKindsOf(session);
  if (
    kinds.includes('NodePgSession') &&
    (typeof client !== 'object' || client === null || !('totalCount' in client))
  ) {
    throw new InvalidOptionsError(
      'DrizzleStore: the db is on a single pg Client, whose one connection every transaction would share; ' +
        'create it on a pg Pool: drizzle({ client: pool })',
    );
  }
  if (kinds.includes('PostgresJsSession') && typeof client === 'function') {
    assertNoResultTransform(client as TransformingSql, 'DrizzleStore');
  }
}

/**
 * The db oncely runs on: the db itself, or for a db made by `withReplicas(primary, replicas)` (a plain object, not a
 * Drizzle class) its `$primary`, where that object sends its writes and transactions too: oncely writes, and reads
 * what it just wrote.
 */
function primaryOf(db: DrizzleDatabaseLike): DrizzleDatabaseLike {
  if (db === null || typeof db !== 'object') return db;
  const primary: unknown = (db as { $primary?: unknown }).$primary;
  const isDrizzle = (value: unknown) => drizzleTransactions.is(value) || isMySqlDrizzle(value);
  if (!isDrizzle(db) && isDrizzle(primary)) return primary as DrizzleDatabaseLike;
  return db;
}

/** The driver on the caller's Drizzle db (not one of its transactions: `store.join(tx)` joins those). */
export function drizzleDriver<DB extends DrizzleDatabaseLike>(
  given: DB,
): OrmDriver<DrizzleTransactionOf<DB>> {
  const db = primaryOf(given);
  if (isMySqlDrizzle(db)) return drizzleMySqlDriver(db as DB);
  if (!drizzleTransactions.is(db as unknown)) {
    throw new InvalidOptionsError(
      'DrizzleStore: pass your Drizzle db (drizzle-orm/node-postgres, drizzle-orm/postgres-js or drizzle-orm/mysql2)',
    );
  }
  if (drizzleTransactions.inTransaction(db)) {
    throw new InvalidOptionsError(
      'DrizzleStore: db is a transaction; pass the db, and store.join(tx) to join a transaction',
    );
  }
  checkConnection(db);
  return {
    kind: drizzleTransactions,

    async run(statements: readonly string[]): Promise<RawRow[][]> {
      // One message per statement, not one for all: outside a transaction block PostgreSQL runs a message of
      // several statements as one implicit transaction, and these are to commit each on its own.
      const rows: RawRow[][] = [];
      for (const statement of statements) rows.push(...rowsPerStatement(await db.execute(statement), 1));
      return rows;
    },

    transaction<T>(
      work: (handle: DrizzleTransactionOf<DB>) => Promise<T>,
      options: TransactionOptions,
    ): Promise<T> {
      return db.transaction(
        (tx) => work(tx as DrizzleTransactionOf<DB>),
        // No config at all for the database's default: given one, even `{}`, Drizzle on postgres.js sends a
        // `set transaction` of it (an empty one is a syntax error), a round trip more.
        options.isolation === undefined ? undefined : { isolationLevel: options.isolation },
      );
    },
  };
}
