/**
 * @module oncely/mikro-orm: oncely's store on MikroORM 6 (@mikro-orm/postgresql, or @mikro-orm/mariadb for MySQL /
 * MariaDB), in transactional mode. The claim, the handler's writes through `store.transactionOf(context)` (the
 * transaction's forked `EntityManager`: what it persists is flushed before the COMMIT) and the outcome commit
 * together.
 *
 * @example
 * import { MikroOrmStore } from 'oncely/mikro-orm';
 * const store = new MikroOrmStore({ orm }); // or { em } where Nest injects an EntityManager
 */
import type { EntityManager } from '@mikro-orm/knex';
import { InvalidOptionsError } from '../../core/errors.js';
import { OrmStore, type OrmStoreOptions } from '../orm-store.js';
import { mikroOrmDriver } from './driver.js';
import { mikroOrmTransactions } from './handle.js';
import { mikroOrmMySqlTransactions } from './mysql.js';

export type { OrmStoreOptions };
export { mikroOrmMySqlTransactions, mikroOrmTransactions };

/** Your MikroORM instance (`await MikroORM.init(…)`) or an `EntityManager` of it; the pool stays yours. */
export type MikroOrmStoreOptions = OrmStoreOptions &
  (
    | { readonly orm: { readonly em: EntityManager }; readonly em?: never }
    | { readonly em: EntityManager; readonly orm?: never }
  );

/** oncely's store on MikroORM; `transactionOf(context)` is the transaction's forked `EntityManager`. */
export class MikroOrmStore extends OrmStore<EntityManager> {
  constructor(options: MikroOrmStoreOptions) {
    const { orm, em, ...rest } = options ?? ({} as MikroOrmStoreOptions);
    const manager: unknown = em ?? orm?.em;
    if (!mikroOrmTransactions.is(manager)) {
      throw new InvalidOptionsError(
        'MikroOrmStore: pass { orm } (your MikroORM) or { em } (an EntityManager of it)',
      );
    }
    super(mikroOrmDriver(manager), rest);
  }
}
