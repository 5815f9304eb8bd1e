/**
 * @module TypeORM on MySQL / MariaDB (`type: 'mysql'` or `'mariadb'`, on mysql2) for oncely: the same
 * `EntityManager`s as on PostgreSQL, and one statement per `queryRunner.query(text)` on the transaction's
 * connection (logged through the data source's logger, and seen by its subscribers, as TypeORM's own queries are).
 * TypeORM's MySQL runner answers with the driver's own result: rows, an OK packet's affected rows, or a CALL's
 * result sets.
 */
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { answerOf } from '../../stores/mysql/driver.js';
import type { MySqlAnswer, MySqlHandleKind } from '../driver.js';
import { typeormTransactions } from './handle.js';

/** The TypeORM data-source types that speak MySQL. */
export const MYSQL_TYPES: readonly string[] = ['mysql', 'mariadb'];

/** Whether a data source, or an `EntityManager` by its data source, speaks MySQL: its `type`. */
export function isMySqlTypeOrm(source: DataSource | EntityManager): boolean {
  const dataSource = 'dataSource' in source ? source.dataSource : source;
  return MYSQL_TYPES.includes(dataSource.options.type);
}

/** One statement on the runner's connection. */
export async function queryOn(runner: QueryRunner, statement: string): Promise<MySqlAnswer> {
  return answerOf(await runner.query(statement));
}

/** One statement on a runner of its own, outside any transaction: it commits on its own. */
export async function queryAlone(dataSource: DataSource, statement: string): Promise<MySqlAnswer> {
  const runner = dataSource.createQueryRunner();
  try {
    return await queryOn(runner, statement);
  } finally {
    await runner.release();
  }
}

/** TypeORM's `EntityManager`s on MySQL: recognized and checked as on PostgreSQL. */
export const typeormMySqlTransactions: MySqlHandleKind<EntityManager> = {
  name: 'typeorm',
  is: typeormTransactions.is,
  inTransaction: typeormTransactions.inTransaction,
  query(manager: EntityManager, statement: string): Promise<MySqlAnswer> {
    // A released runner's connection is back in the pool: TypeORM's own query refuses it.
    if (manager.queryRunner !== undefined) return queryOn(manager.queryRunner, statement);
    return queryAlone(manager.dataSource, statement);
  },
};
