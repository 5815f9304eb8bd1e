/**
 * @module The store every ORM subpath exports (`KyselyStore`, `KnexStore`, `DrizzleStore`, `TypeOrmStore`,
 * `MikroOrmStore`, `PrismaStore`, `PostgresJsStore`): made on the ORM's own database object, it runs on PostgreSQL or
 * on MySQL / MariaDB as that object does. The dialect is the ORM's, told by its driver function from the object
 * itself, so one constructor serves both; the statements are each store's own (`OrmPostgresStore` on PostgreSQL's,
 * `OrmMySqlStore` on MySQL's).
 */
import type { StoreInspector } from '../core/inspection.js';
import type {
  BeginInput,
  BeginResult,
  CompleteInput,
  KeyRecord,
  PurgeOptions,
  ReleaseInput,
  RenewInput,
  Store,
  StoreEndpoint,
  StoreStats,
  TransactionBeginInput,
  TransactionBeginResult,
  TransitionResult,
  WaitForOptions,
} from '../core/store.js';
import type { Dialect, OrmDriver } from './driver.js';
import { OrmMySqlStore } from './mysql-store.js';
import { OrmPostgresStore, type OrmStoreOptions } from './store.js';

export type { OrmStoreOptions };

/**
 * What each dialect's store (OrmPostgresStore, OrmMySqlStore) offers, as the ORM store uses it. Named by shape, so
 * the ORM store's declarations name neither dialect's store: a PostgreSQL user's types never reach for the MySQL
 * drivers' (and the other way round).
 */
interface Implementation<Handle> extends Store {
  readonly name: 'postgres' | 'mysql';
  readonly inspector: StoreInspector;
  transactionOf(context: { readonly transaction?: unknown } | null | undefined): Handle;
  join(handle: Handle): Implementation<Handle>;
  migrate(): Promise<void>;
  beginTransaction(input: TransactionBeginInput): Promise<TransactionBeginResult>;
  stats(): Promise<StoreStats>;
  purgeExpired(options?: PurgeOptions): Promise<number>;
}

/**
 * The key's record, the handler's writes through the ORM's own transaction object and the outcome, committed
 * together, on whichever database the ORM speaks to. `store.transactionOf(context)` is the ORM's transaction;
 * `store.join(trx)` claims inside a transaction you opened (a savepoint of it).
 */
export class OrmStore<Handle> implements Store {
  readonly name: 'postgres' | 'mysql';
  /** The database the ORM speaks to: PostgreSQL, or MySQL / MariaDB. */
  readonly dialect: Dialect;
  /**
   * PostgreSQL's only (a poll of the record; MySQL has no such wait: a duplicate there waits on the row's lock, or
   * the engine calls `begin` again).
   */
  declare readonly waitFor?: (key: string, options: WaitForOptions) => Promise<boolean>;
  readonly #store: Implementation<Handle>;

  /** `implementation`: internal, a `join` view's. */
  constructor(
    driver: OrmDriver<Handle>,
    options: OrmStoreOptions = {},
    implementation?: Implementation<Handle>,
  ) {
    const store: Implementation<Handle> =
      implementation ??
      (driver.dialect === 'mysql'
        ? new OrmMySqlStore(driver, options)
        : new OrmPostgresStore(driver, options));
    this.#store = store;
    this.name = store.name;
    this.dialect = store.name;
    if (store instanceof OrmPostgresStore)
      this.waitFor = (key, waitOptions) => store.waitFor(key, waitOptions);
  }

  /**
   * The ORM's transaction object from the context oncely hands your code (a claim, an `idempotent()` context,
   * `res.locals.idempotency`, `c.get('idempotency')`, `request.idempotency`): write through it and your writes commit
   * or roll back with the key's record. Throws when the context holds no transaction of this ORM.
   */
  transactionOf(context: { readonly transaction?: unknown } | null | undefined): Handle {
    return this.#store.transactionOf(context);
  }

  /**
   * A view of this store that joins the transaction you opened with the ORM: the claim, your code and the outcome
   * run in a savepoint of it, and nothing is durable until you commit. Refuses a handle outside a transaction.
   */
  join(handle: Handle): OrmStore<Handle> {
    return new OrmStore<Handle>(undefined as never, {}, this.#store.join(handle));
  }

  /** The table (and on MySQL its procedures), created through the ORM when missing; idempotent. */
  migrate(): Promise<void> {
    return this.#store.migrate();
  }

  get endpoint(): StoreEndpoint | undefined {
    return this.#store.endpoint;
  }

  get inspector(): StoreInspector {
    return this.#store.inspector;
  }

  beginTransaction(input: TransactionBeginInput): Promise<TransactionBeginResult> {
    return this.#store.beginTransaction(input);
  }
  begin(input: BeginInput): Promise<BeginResult> {
    return this.#store.begin(input);
  }
  complete(input: CompleteInput): Promise<TransitionResult> {
    return this.#store.complete(input);
  }
  release(input: ReleaseInput): Promise<TransitionResult> {
    return this.#store.release(input);
  }
  renew(input: RenewInput): Promise<TransitionResult> {
    return this.#store.renew(input);
  }
  get(key: string): Promise<KeyRecord | undefined> {
    return this.#store.get(key);
  }
  delete(key: string): Promise<boolean> {
    return this.#store.delete(key);
  }
  stats(): Promise<StoreStats> {
    return this.#store.stats();
  }
  purgeExpired(options?: PurgeOptions): Promise<number> {
    return this.#store.purgeExpired(options);
  }
  /** The ORM's pool is yours: close the ORM when done. */
  async close(): Promise<void> {}
}
