/**
 * @module oncely's driver for MikroORM on PostgreSQL (or MySQL / MariaDB: mysql.ts): transactions through `em.transactional(fn, { isolationLevel })`
 * (Knex sends `BEGIN TRANSACTION ISOLATION LEVEL …`; what the handler persisted is flushed before oncely's outcome
 * statement (see handle.ts), and MikroORM flushes anything left when `fn` resolves, then COMMITs, so the entities
 * commit with the key), and autocommit statements on the connection's pool. MikroORM has no transaction clock of its
 * own, so `timeoutMs` has nothing to set.
 */
import type {
  EntityManager,
  IsolationLevel as MikroIsolationLevel,
  TransactionPropagation,
} from '@mikro-orm/knex';
import type { IsolationLevel, OrmDriver, RawRow } from '../driver.js';
import { joined, mikroOrmTransactions, rowsOf } from './handle.js';
import { isMySqlMikroOrm, mikroOrmMySqlDriver } from './mysql.js';

/**
 * The store's driver on a MikroORM `EntityManager` (`orm.em`, or the one Nest injects).
 *
 * The transaction is always a new one (propagation `requires_new`): called inside a transaction the caller opened
 * with `em.transactional` (which MikroORM finds through its async context), the default would nest a savepoint in
 * it, ignore the isolation level, and leave the commit to the caller; joining a caller's transaction is what
 * `store.join(em)` is for.
 */
export function mikroOrmDriver(em: EntityManager): OrmDriver<EntityManager> {
  const transaction = <T>(
    work: (em: EntityManager) => Promise<T>,
    options: { isolation: IsolationLevel | undefined },
  ) => {
    // MikroORM's enums are its values spelled out (`'read committed'`, `'requires_new'`); the strings stand in for
    // them, as the enums themselves cannot be imported here (the ORM is a peer, only its types come in).
    const transactional = {
      isolationLevel: options.isolation as MikroIsolationLevel,
      propagation: 'requires_new' as TransactionPropagation.REQUIRES_NEW,
    };
    return em.transactional(async (fork) => {
      // With `disableTransactions` MikroORM calls back without a transaction: the writes would commit one by one.
      if (!fork.isInTransaction()) {
        throw new Error('mikro-orm: em.transactional opened no transaction (is disableTransactions set?)');
      }
      return work(fork);
    }, transactional);
  };
  if (isMySqlMikroOrm(em)) return mikroOrmMySqlDriver(em, transaction);
  return {
    kind: mikroOrmTransactions,
    async run(statements: readonly string[]): Promise<RawRow[][]> {
      if (statements.length === 0) return [];
      // The connection itself, not `em.execute`: the em could resolve to a caller's transaction through the async
      // context, and these statements must commit on their own.
      const answer = await em
        .getConnection('write')
        .execute<RawRow[] | RawRow[][]>(joined(statements), [], 'all');
      return rowsOf(statements, answer);
    },
    transaction,
  };
}
