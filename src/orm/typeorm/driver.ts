/**
 * @module oncely's driver for a TypeORM `DataSource` on PostgreSQL, or MySQL / MariaDB (mysql.ts): transactions through
 * `dataSource.transaction(isolation, fn)` (TypeORM sends `START TRANSACTION`, then `SET TRANSACTION ISOLATION
 * LEVEL …`, and COMMITs when `fn` resolves), and autocommit statements on a query runner of their own. TypeORM has
 * no transaction clock of its own, so `timeoutMs` has nothing to set: the claim's lease decides.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { IsolationLevel, OrmDriver, RawRow } from '../driver.js';
import { runOn, typeormTransactions } from './handle.js';
import { isMySqlTypeOrm, queryAlone, typeormMySqlTransactions } from './mysql.js';

// TypeORM spells the levels in capitals (its IsolationLevel type is not exported from the package's root).
const ISOLATION = {
  'read committed': 'READ COMMITTED',
  'repeatable read': 'REPEATABLE READ',
  serializable: 'SERIALIZABLE',
} as const satisfies Readonly<Record<IsolationLevel, string>>;

/** The store's driver on a TypeORM data source (initialized, `type: 'postgres'`, `'mysql'` or `'mariadb'`). */
export function typeormDriver(dataSource: DataSource): OrmDriver<EntityManager> {
  const transaction = <T>(
    work: (manager: EntityManager) => Promise<T>,
    options: { isolation: IsolationLevel | undefined },
  ) => {
    if (options.isolation === undefined) return dataSource.transaction(work);
    return dataSource.transaction(ISOLATION[options.isolation], work);
  };
  if (isMySqlTypeOrm(dataSource)) {
    return {
      dialect: 'mysql',
      kind: typeormMySqlTransactions,
      query: (statement) => queryAlone(dataSource, statement),
      transaction,
    };
  }
  return {
    kind: typeormTransactions,
    async run(statements: readonly string[]): Promise<RawRow[][]> {
      const runner = dataSource.createQueryRunner();
      try {
        return await runOn(runner, dataSource.logger, statements);
      } finally {
        await runner.release();
      }
    },
    transaction,
  };
}
