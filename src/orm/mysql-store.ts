/**
 * @module The MySQL store on the caller's ORM (Kysely, Knex, Drizzle, TypeORM, MikroORM, Prisma on MySQL or
 * MariaDB): the same table, procedures and statements as `MySqlStore`, sent through the ORM's raw query, in
 * transactional mode, so the key's record, the handler's writes (through the ORM's own transaction object) and the
 * outcome commit together. Each ORM's store class (`KyselyStore`, …) makes one of these when its database object
 * speaks MySQL (orm-store.ts).
 */
import { InvalidOptionsError } from '../core/errors.js';
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
} from '../core/store.js';
import { knownOptions, wholeNumber } from '../core/validate.js';
import { poolFor, type SqlValue } from '../stores/mysql/driver.js';
import { storeError } from '../stores/mysql/errors.js';
import { migrateOn } from '../stores/mysql/migrate.js';
import { tableName } from '../stores/mysql/options.js';
import { MySqlRuntime } from '../stores/mysql/runtime.js';
import { MySqlStore } from '../stores/mysql/store.js';
import { beginJoined, type JoinedTransaction } from '../stores/mysql/transaction-join.js';
import type { IsolationLevel, MySqlSqlDriver } from './driver.js';
import { assertJoinable, transactionIn } from './handle-checks.js';
import { mysqlFailure, ormMySqlDriver, runThrough } from './mysql-source.js';
import { beginOrmMySqlTransaction } from './mysql-transaction.js';
import type { OrmStoreOptions } from './store.js';

const OPTIONS = ['schema', 'table', 'clock', 'lockTimeoutMs', 'isolation', 'pollIntervalMs'];
const ISOLATION_LEVELS: readonly IsolationLevel[] = ['read committed', 'repeatable read', 'serializable'];

interface Settings<Handle> {
  readonly driver: MySqlSqlDriver<Handle>;
  readonly plain: MySqlStore;
  readonly runtime: MySqlRuntime;
  readonly isolation: IsolationLevel | undefined;
  readonly lockWaitMs: number;
}

/**
 * A MySQL store whose every statement goes through an ORM. The Engine claims each key in a transaction the ORM opens
 * (or, for a `join(handle)` view, in a savepoint of the caller's), and the handler writes through the ORM's own
 * transaction object.
 */
export class OrmMySqlStore<Handle> implements Store {
  readonly name = 'mysql';
  readonly #settings: Settings<Handle>;
  readonly #joined: JoinedTransaction | undefined;

  constructor(driver: MySqlSqlDriver<Handle>, options: OrmStoreOptions = {}, joining?: Joining<Handle>) {
    this.#settings = joining?.settings ?? settingsOf(driver, options);
    this.#joined = joining?.joined;
  }

  /** The ORM's transaction object from a claim's context, or an `InvalidOptionsError`. */
  transactionOf(context: { readonly transaction?: unknown } | null | undefined): Handle {
    return transactionIn(this.#settings.driver.kind, context);
  }

  /** A view that claims in a savepoint of `handle`'s open transaction; refuses a handle outside one. */
  join(handle: Handle): OrmMySqlStore<Handle> {
    const { kind } = this.#settings.driver;
    assertJoinable(kind, handle);
    const joined: JoinedTransaction = {
      handle,
      run: (sql, values) => runThrough((text) => kind.query(handle, text), sql, values),
    };
    return new OrmMySqlStore(this.#settings.driver, {}, { settings: this.#settings, joined });
  }

  /**
   * The table and its procedures, created when missing (`MySqlStore#migrate`'s DDL), in a transaction the ORM opens:
   * one connection of the ORM's for the migration's session lock and settings (MySQL's DDL commits on its own).
   */
  async migrate(): Promise<void> {
    const { driver, runtime } = this.#settings;
    const on = (handle: Handle) => ({
      run: (sql: string, values: readonly SqlValue[]) =>
        runThrough((text) => driver.kind.query(handle, text), sql, values),
    });
    try {
      await driver.transaction((handle) => migrateOn(on(handle), runtime.table), {
        isolation: undefined,
        timeoutMs: 120_000,
      });
    } catch (error) {
      throw storeError('migrate', mysqlFailure(error), runtime.table);
    }
  }

  get endpoint(): StoreEndpoint | undefined {
    return this.#settings.plain.endpoint;
  }

  get inspector(): StoreInspector {
    return this.#settings.plain.inspector;
  }

  beginTransaction(input: TransactionBeginInput): Promise<TransactionBeginResult> {
    const { runtime, lockWaitMs } = this.#settings;
    if (this.#joined !== undefined) return beginJoined(runtime, { lockWaitMs }, this.#joined, input);
    return beginOrmMySqlTransaction(this.#settings, input);
  }

  begin(input: BeginInput): Promise<BeginResult> {
    return this.#settings.plain.begin(input);
  }
  complete(input: CompleteInput): Promise<TransitionResult> {
    return this.#settings.plain.complete(input);
  }
  release(input: ReleaseInput): Promise<TransitionResult> {
    return this.#settings.plain.release(input);
  }
  renew(input: RenewInput): Promise<TransitionResult> {
    return this.#settings.plain.renew(input);
  }
  get(key: string): Promise<KeyRecord | undefined> {
    return this.#settings.plain.get(key);
  }
  delete(key: string): Promise<boolean> {
    return this.#settings.plain.delete(key);
  }
  stats(): Promise<StoreStats> {
    return this.#settings.plain.stats();
  }
  purgeExpired(options?: PurgeOptions): Promise<number> {
    return this.#settings.plain.purgeExpired(options);
  }
}

/** @internal What a `join` view shares with its store, and the transaction it joins. */
interface Joining<Handle> {
  readonly settings: Settings<Handle>;
  readonly joined: JoinedTransaction;
}

function settingsOf<Handle>(driver: MySqlSqlDriver<Handle>, options: OrmStoreOptions): Settings<Handle> {
  const { name } = driver.kind;
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError(`${name}: options must be an object`);
  knownOptions(name, options, OPTIONS);
  if (options.schema !== undefined) {
    throw new InvalidOptionsError(
      `${name}: schema is PostgreSQL's; on MySQL the table is in the database the ORM connects to`,
    );
  }
  if (options.pollIntervalMs !== undefined) {
    throw new InvalidOptionsError(
      `${name}: pollIntervalMs is PostgreSQL's (its plain waitFor); on MySQL a waiting duplicate polls by begin`,
    );
  }
  const { isolation } = options;
  if (isolation !== undefined && !ISOLATION_LEVELS.includes(isolation))
    throw new InvalidOptionsError(`isolation must be one of ${ISOLATION_LEVELS.join(', ')}`);
  const table = tableName(options.table);
  const mysqlDriver = ormMySqlDriver(driver);
  return {
    driver,
    plain: new MySqlStore({
      pool: poolFor(mysqlDriver),
      table,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    }),
    runtime: new MySqlRuntime(mysqlDriver, table, options.clock),
    isolation,
    // MySQL waits for row locks in whole seconds (innodb_lock_wait_timeout), at least one.
    lockWaitMs: wholeNumber('lockTimeoutMs', options.lockTimeoutMs, 1_000, { min: 1, max: 3_600_000 }),
  };
}
