/**
 * @module MikroORM on MySQL / MariaDB (@mikro-orm/mariadb, or @mikro-orm/mysql) for oncely: the same forked
 * `EntityManager`s as on PostgreSQL, and one statement per `em.execute(text, [], 'all')`, which runs on the em's
 * transaction context and answers with the driver's own result (rows, an OK packet's affected rows, or a CALL's
 * result sets). As on PostgreSQL, what the em holds unflushed is flushed before oncely's statements on a
 * transaction (handle.ts says why).
 */
import type { EntityManager } from '@mikro-orm/knex';
import { answerOf } from '../../stores/mysql/driver.js';
import type { MySqlAnswer, MySqlHandleKind, MySqlSqlDriver, TransactionOptions } from '../driver.js';
import { mikroOrmTransactions } from './handle.js';

/** Whether the em's platform is MikroORM's MySQL one (`MariaDbPlatform` extends `MySqlPlatform`). */
export function isMySqlMikroOrm(em: EntityManager): boolean {
  const platform: unknown = (em as { getPlatform?: () => unknown }).getPlatform?.();
  for (let at = platform; at !== null && typeof at === 'object'; ) {
    at = Object.getPrototypeOf(at);
    if ((at as { constructor?: { name?: unknown } } | null)?.constructor?.name === 'MySqlPlatform')
      return true;
  }
  return false;
}

/** MikroORM's `EntityManager`s on MySQL: recognized and checked as on PostgreSQL. */
export const mikroOrmMySqlTransactions: MySqlHandleKind<EntityManager> = {
  name: 'mikro-orm',
  is: mikroOrmTransactions.is,
  inTransaction: mikroOrmTransactions.inTransaction,
  async query(em: EntityManager, statement: string): Promise<MySqlAnswer> {
    if (mikroOrmTransactions.inTransaction(em)) await em.flush();
    return answerOf(await em.execute(statement, [], 'all'));
  },
};

/**
 * The MySQL driver on a MikroORM `EntityManager`: statements in autocommit on the connection itself (never through
 * `em`, which could resolve to a caller's transaction through MikroORM's async context), transactions as on
 * PostgreSQL (`transaction`, from driver.ts).
 */
export function mikroOrmMySqlDriver(
  em: EntityManager,
  transaction: MySqlSqlDriver<EntityManager>['transaction'],
): MySqlSqlDriver<EntityManager> {
  return {
    dialect: 'mysql',
    kind: mikroOrmMySqlTransactions,
    async query(statement: string): Promise<MySqlAnswer> {
      return answerOf(await em.getConnection('write').execute(statement, [], 'all'));
    },
    transaction: <T>(work: (em: EntityManager) => Promise<T>, options: TransactionOptions) =>
      transaction(work, options),
  };
}
