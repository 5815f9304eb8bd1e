/**
 * @module oncely/kysely: oncely's store on a Kysely instance (`PostgresDialect`, or `MysqlDialect` on MySQL /
 * MariaDB), in transactional mode. The claim, the handler's writes through `store.transactionOf(context)` (Kysely's
 * `Transaction`) and the outcome commit together.
 *
 * @example
 * import { KyselyStore } from 'oncely/kysely';
 * const store = new KyselyStore({ db });
 */
import type { Kysely, Transaction } from 'kysely';
import { InvalidOptionsError } from '../../core/errors.js';
import { OrmStore, type OrmStoreOptions } from '../orm-store.js';
import { kyselyDriver } from './driver.js';
import { kyselyTransactions } from './handle.js';
import { kyselyMySqlTransactions } from './mysql.js';

export type { OrmStoreOptions };
export { kyselyMySqlTransactions, kyselyTransactions };

export interface KyselyStoreOptions<DB> extends OrmStoreOptions {
  /**
   * Your Kysely instance, on `PostgresDialect` or on `MysqlDialect` (MySQL, MariaDB): the store speaks its dialect.
   * Its pool is yours: the store never closes it.
   */
  readonly db: Kysely<DB>;
}

/** oncely's store on a Kysely instance; `transactionOf(context)` is Kysely's `Transaction<DB>`. */
export class KyselyStore<DB> extends OrmStore<Transaction<DB>> {
  constructor(options: KyselyStoreOptions<DB>) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('KyselyStore: pass { db }, your Kysely instance');
    }
    const { db, ...rest } = options;
    super(kyselyDriver(db), rest);
  }
}
