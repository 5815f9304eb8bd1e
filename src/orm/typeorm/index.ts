/**
 * @module oncely/typeorm: the PostgreSQL store on a TypeORM `DataSource`, in transactional mode. The claim, the
 * handler's writes through `store.transactionOf(context)` (the transaction's `EntityManager`) and the outcome commit
 * together.
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

export type { OrmStoreOptions };
export { typeormTransactions };

export interface TypeOrmStoreOptions extends OrmStoreOptions {
  /** Your initialized TypeORM data source (`type: 'postgres'`). Its pool is yours: the store never closes it. */
  readonly dataSource: DataSource;
}

/** The PostgreSQL store on a TypeORM data source; `transactionOf(context)` is the transaction's `EntityManager`. */
export class TypeOrmStore extends OrmStore<EntityManager> {
  constructor(options: TypeOrmStoreOptions) {
    const { dataSource, ...rest } = options ?? ({} as TypeOrmStoreOptions);
    if (!isDataSource(dataSource)) {
      throw new InvalidOptionsError('TypeOrmStore: pass { dataSource }, your TypeORM DataSource');
    }
    // oncely's statements are PostgreSQL's, and its batching needs the `pg` driver's one result per statement.
    if (dataSource.options.type !== 'postgres') {
      throw new InvalidOptionsError(
        `TypeOrmStore: the data source is of type '${dataSource.options.type}'; oncely needs type 'postgres'`,
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
