/**
 * @module oncely/typeorm: oncely's store on a TypeORM `DataSource` (`type: 'postgres'`, or `'mysql'` / `'mariadb'`),
 * in transactional mode. The claim, the handler's writes through `store.transactionOf(context)` (the transaction's
 * `EntityManager`) and the outcome commit together.
 *
 * @example
 * import { TypeOrmStore } from 'oncely/typeorm';
 * const store = new TypeOrmStore({ dataSource });
 */
import type { DataSource, EntityManager } from 'typeorm';
import { InvalidOptionsError } from '../../core/errors.js';
import { OrmStore, type OrmStoreOptions } from '../orm-store.js';
import { typeormDriver } from './driver.js';
import { typeormTransactions } from './handle.js';
import { MYSQL_TYPES, typeormMySqlTransactions } from './mysql.js';

export type { OrmStoreOptions };
export { typeormMySqlTransactions, typeormTransactions };

export interface TypeOrmStoreOptions extends OrmStoreOptions {
  /**
   * Your initialized TypeORM data source: `type: 'postgres'`, or `'mysql'` / `'mariadb'` (on mysql2); the store
   * speaks its dialect. Its pool is yours: the store never closes it.
   */
  readonly dataSource: DataSource;
}

/** oncely's store on a TypeORM data source; `transactionOf(context)` is the transaction's `EntityManager`. */
export class TypeOrmStore extends OrmStore<EntityManager> {
  constructor(options: TypeOrmStoreOptions) {
    const { dataSource, ...rest } = options ?? ({} as TypeOrmStoreOptions);
    if (!isDataSource(dataSource)) {
      throw new InvalidOptionsError('TypeOrmStore: pass { dataSource }, your TypeORM DataSource');
    }
    // oncely has statements for PostgreSQL (batched on the `pg` driver) and MySQL / MariaDB (on mysql2).
    const { type } = dataSource.options;
    if (type !== 'postgres' && !MYSQL_TYPES.includes(type)) {
      throw new InvalidOptionsError(
        `TypeOrmStore: the data source is of type '${type}'; oncely needs type 'postgres', 'mysql' or 'mariadb'`,
      );
    }
    super(typeormDriver(dataSource), rest);
  }
}

function isDataSource(value: unknown): value is DataSource {
  if (value === null || typeof value !== 'object') return false;
  const source = value as Partial<Record<'@instanceof' | 'createQueryRunner' | 'transaction', unknown>>;
  return (
    source['@instanceof'] === Symbol.for('DataSource') &&
    typeof source.createQueryRunner === 'function' &&
    typeof source.transaction === 'function'
  );
}
