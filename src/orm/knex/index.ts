/**
 * @module oncely/knex: oncely's store on a Knex instance (the `pg` client, or `mysql2` on MySQL / MariaDB), in
 * transactional mode. The claim, the handler's writes through `store.transactionOf(context)` (Knex's `trx`) and
 * the outcome commit together.
 *
 * @example
 * import { KnexStore } from 'oncely/knex';
 * const store = new KnexStore({ knex });
 */
import type { Knex } from 'knex';
import { InvalidOptionsError } from '../../core/errors.js';
import { OrmStore, type OrmStoreOptions } from '../orm-store.js';
import { knexDriver } from './driver.js';
import { knexTransactions } from './handle.js';
import { knexMySqlTransactions } from './mysql.js';

export type { OrmStoreOptions };
export { knexMySqlTransactions, knexTransactions };

export interface KnexStoreOptions extends OrmStoreOptions {
  /**
   * Your Knex instance with `client: 'pg'`, or `client: 'mysql2'` (MySQL, MariaDB): the store speaks its dialect.
   * Its pool is yours: the store never closes it.
   */
  readonly knex: Knex;
}

/** oncely's store on a Knex instance; `transactionOf(context)` is Knex's `Knex.Transaction`. */
export class KnexStore extends OrmStore<Knex.Transaction> {
  constructor(options: KnexStoreOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('KnexStore: pass { knex }, your Knex instance');
    }
    const { knex, ...rest } = options;
    super(knexDriver(knex), rest);
  }
}
