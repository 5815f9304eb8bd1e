/**
 * @module oncely/kysely: the PostgreSQL store on a Kysely instance (PostgreSQL dialect), in transactional mode. The
 * claim, the handler's writes through `store.transactionOf(context)` (Kysely's `Transaction`) and the outcome commit
 * together.
 *
 * @example
 * import { KyselyStore } from 'oncely/kysely';
 * const store = new KyselyStore({ db });
 */
import type { Kysely, Transaction } from 'kysely';
import { InvalidOptionsError } from '../../core/errors.js';
import { OrmPostgresStore, type OrmStoreOptions } from '../store.js';
import { kyselyDriver } from './driver.js';
import { kyselyTransactions } from './handle.js';

export type { OrmStoreOptions };
export { kyselyTransactions };

export interface KyselyStoreOptions<DB> extends OrmStoreOptions {
  /** Your Kysely instance on `PostgresDialect`. Its pool is yours: the store never closes it. */
  readonly db: Kysely<DB>;
}

/** The PostgreSQL store on a Kysely instance; `transactionOf(context)` is Kysely's `Transaction<DB>`. */
export class KyselyStore<DB> extends OrmPostgresStore<Transaction<DB>> {
  constructor(options: KyselyStoreOptions<DB>) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('KyselyStore: pass { db }, your Kysely instance');
    }
    const { db, ...rest } = options;
    super(kyselyDriver(db), rest);
  }
}
