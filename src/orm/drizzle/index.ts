/**
 * @module oncely/drizzle: oncely's store on your Drizzle db (`drizzle-orm/node-postgres` on a pg Pool,
 * `drizzle-orm/postgres-js`, or `drizzle-orm/mysql2` on a mysql2 pool for MySQL / MariaDB), in transactional mode:
 * the key's record, your writes through Drizzle's transaction (`store.transactionOf(context)`, typed with your
 * schema) and the outcome commit together. Nothing of Drizzle is imported at run time.
 *
 * @example
 * import { drizzle } from 'drizzle-orm/node-postgres';
 * import pg from 'pg';
 * import { DrizzleStore } from 'oncely/drizzle';
 *
 * const db = drizzle({ client: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 * const store = new DrizzleStore({ db });
 */
import { InvalidOptionsError } from '../../core/errors.js';
import { OrmStore, type OrmStoreOptions } from '../orm-store.js';
import { drizzleDriver } from './driver.js';
import type { DrizzleDatabaseLike, DrizzleTransactionOf } from './handle.js';

export type { OrmStoreOptions } from '../store.js';
export { drizzleDriver } from './driver.js';
export { type DrizzleDatabaseLike, type DrizzleTransactionOf, drizzleTransactions } from './handle.js';
export { drizzleMySqlTransactions } from './mysql.js';

export interface DrizzleStoreOptions<DB extends DrizzleDatabaseLike> extends OrmStoreOptions {
  /**
   * Your Drizzle db: on a pg Pool or a postgres.js `sql` (PostgreSQL), or on a mysql2 pool (MySQL, MariaDB); the
   * store speaks its dialect. Its pool is yours: the store never closes it.
   */
  readonly db: DB;
}

/**
 * oncely's store on a Drizzle db. `store.transactionOf(context)` is the transaction your db's
 * `transaction(async (tx) => …)` gives, with your schema (`tx.insert(payments)`, `tx.query.payments` type-check as
 * inside it).
 */
export class DrizzleStore<DB extends DrizzleDatabaseLike> extends OrmStore<DrizzleTransactionOf<DB>> {
  constructor(options: DrizzleStoreOptions<DB>) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('DrizzleStore: pass { db }, your Drizzle db');
    }
    const { db, ...storeOptions } = options;
    super(drizzleDriver(db), storeOptions);
  }
}
