/**
 * @module oncely/postgres-js: the PostgreSQL store on your postgres.js `sql` (porsager's `postgres`), in
 * transactional mode: the key's record, your writes through the transaction's `sql` (`store.transactionOf(context)`)
 * and the outcome commit together. Nothing of postgres.js is imported at run time.
 *
 * @example
 * import postgres from 'postgres';
 * import { PostgresJsStore } from 'oncely/postgres-js';
 *
 * const sql = postgres(process.env.DATABASE_URL!);
 * const store = new PostgresJsStore({ sql });
 */
import type { Sql, TransactionSql } from 'postgres';
import { InvalidOptionsError } from '../../core/errors.js';
import { OrmStore, type OrmStoreOptions } from '../orm-store.js';
import { postgresJsDriver } from './driver.js';

export type { OrmStoreOptions } from '../store.js';
export { postgresJsDriver } from './driver.js';
export { postgresJsTransactions } from './handle.js';

export interface PostgresJsStoreOptions<Types extends Record<string, unknown>> extends OrmStoreOptions {
  /** Your `sql`, as `postgres(url)` returned it (a pool). It is yours: the store never ends it. */
  readonly sql: Sql<Types>;
}

/**
 * The PostgreSQL store on a postgres.js `sql`. `store.transactionOf(context)` is the transaction's `sql`
 * (`TransactionSql`, as `sql.begin(async (tx) => …)` gives it), with your `sql`'s custom types.
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is postgres.js's own type map of a `sql` without custom types.
export class PostgresJsStore<Types extends Record<string, unknown> = {}> extends OrmStore<
  TransactionSql<Types>
> {
  constructor(options: PostgresJsStoreOptions<Types>) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('PostgresJsStore: pass { sql }, what postgres(url) returned');
    }
    const { sql, ...storeOptions } = options;
    super(postgresJsDriver(sql), storeOptions);
  }
}
