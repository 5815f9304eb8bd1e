/**
 * @module The PostgreSQL store on the caller's ORM: the same table and statements as `PostgresStore`, sent through
 * the ORM's raw query, in transactional mode, so the key's record, the handler's writes (through the ORM's own
 * transaction object) and the outcome commit together. Each ORM's subpath (oncely/kysely, oncely/prisma, …) makes
 * one of these on its database object.
 */
import type { Client } from 'pg';
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
  WaitForOptions,
} from '../core/store.js';
import { knownOptions, wholeNumber } from '../core/validate.js';
import { schemaFor } from '../stores/postgres/migrate.js';
import { identifier } from '../stores/postgres/options.js';
import { type Statements, statementsFor, tableTarget } from '../stores/postgres/sql.js';
import { PostgresStore } from '../stores/postgres/store.js';
import type { IsolationLevel } from '../stores/postgres/transaction-session.js';
import type { SqlDriver } from './driver.js';
import { assertJoinable, transactionIn } from './handle-checks.js';
import { ormSource, runStatements } from './source.js';
import { splitStatements } from './split-statements.js';
import { beginOrmTransaction } from './transaction.js';

export interface OrmStoreOptions {
  /** Schema of the table. Default `public`. */
  readonly schema?: string;
  /** Table name. Default `oncely_keys`. */
  readonly table?: string;
  /** Milliseconds since the epoch, for tests. Default: the database server's clock decides every time. */
  readonly clock?: () => number;
  /**
   * How long a claim waits for another open transaction that holds the key when the request itself does not wait
   * (`waitMs` 0), before answering in progress. Default 100 ms.
   */
  readonly lockTimeoutMs?: number;
  /**
   * Isolation level of the transactions oncely opens through the ORM. Default: the database's own
   * (`default_transaction_isolation`, read committed unless your server says otherwise), asked for with no statement
   * of its own; the claim is correct under each level.
   */
  readonly isolation?: IsolationLevel;
  /** Longest pause between two polls of a plain-mode `waitFor`. Default 250 ms. */
  readonly pollIntervalMs?: number;
}

const OPTIONS = ['schema', 'table', 'clock', 'lockTimeoutMs', 'isolation', 'pollIntervalMs'];
const ISOLATION_LEVELS: readonly IsolationLevel[] = ['read committed', 'repeatable read', 'serializable'];
// As text: pg_advisory_xact_lock returns void, a column type Prisma's raw query refuses to read.
const MIGRATION_LOCK = "SELECT pg_advisory_xact_lock(hashtext('oncely.migrate'))::text AS locked";

interface Settings<Handle> {
  readonly driver: SqlDriver<Handle>;
  readonly plain: PostgresStore;
  readonly statements: Statements;
  readonly schema: string;
  readonly table: string;
  readonly clock: (() => number) | undefined;
  readonly isolation: IsolationLevel | undefined;
  readonly lockTimeoutMs: number;
}

/**
 * A PostgreSQL store whose every statement goes through an ORM. The Engine claims each key in a transaction the
 * ORM opens (or, for a `join(trx)` view, in a savepoint of the caller's), and the handler writes through the ORM's
 * own transaction object: `store.transactionOf(context)`.
 */
export class OrmPostgresStore<Handle> implements Store {
  readonly name = 'postgres';
  readonly #settings: Settings<Handle>;
  readonly #joined: Handle | undefined;

  constructor(driver: SqlDriver<Handle>, options: OrmStoreOptions = {}, joining?: Joining<Handle>) {
    this.#settings = joining?.settings ?? settingsOf(driver, options);
    this.#joined = joining?.handle;
  }

  /**
   * The ORM's transaction object from the context oncely hands your code (a claim, an `idempotent()` context,
   * `res.locals.idempotency`, `c.get('idempotency')`, `request.idempotency`): write through it and your writes commit
   * or roll back with the key's record. Throws when the context holds no transaction of this ORM.
   */
  transactionOf(context: { readonly transaction?: unknown } | null | undefined): Handle {
    return transactionIn(this.#settings.driver.kind, context);
  }

  /**
   * A view of this store that joins the transaction you opened with the ORM: the claim, your code and the outcome
   * run in a savepoint of it, and nothing is durable until you commit. Refuses a handle outside a transaction.
   */
  join(handle: Handle): OrmPostgresStore<Handle> {
    assertJoinable(this.#settings.driver.kind, handle);
    return new OrmPostgresStore(this.#settings.driver, {}, { settings: this.#settings, handle });
  }

  /** The table and index, created through the ORM when missing (idempotent; safe from several processes at once). */
  async migrate(): Promise<void> {
    const { driver, schema, table } = this.#settings;
    const statements = [MIGRATION_LOCK, ...splitStatements(schemaFor({ schema, table }))];
    await driver.transaction(
      (handle) => runStatements(driver.kind, (list) => driver.kind.run(handle, list), statements),
      { isolation: undefined, timeoutMs: 60_000 },
    );
  }

  get endpoint(): StoreEndpoint | undefined {
    return this.#settings.plain.endpoint;
  }

  get inspector(): StoreInspector {
    return this.#settings.plain.inspector;
  }

  beginTransaction(input: TransactionBeginInput): Promise<TransactionBeginResult> {
    const { driver, isolation, lockTimeoutMs, statements, clock, plain } = this.#settings;
    return beginOrmTransaction(
      {
        driver,
        joined: this.#joined,
        isolation,
        lockTimeoutMs,
        statements,
        now: () => (clock === undefined ? null : clock()),
        durableClaim: async (key, token) => {
          const record = await plain.get(key).catch(() => undefined);
          return record?.state === 'inProgress' && record.token === token;
        },
      },
      input,
    );
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
  waitFor(key: string, options: WaitForOptions): Promise<boolean> {
    return this.#settings.plain.waitFor(key, options);
  }
  stats(): Promise<StoreStats> {
    return this.#settings.plain.stats();
  }
  purgeExpired(options?: PurgeOptions): Promise<number> {
    return this.#settings.plain.purgeExpired(options);
  }
  /** The ORM's pool is yours: close the ORM when done. */
  async close(): Promise<void> {}
}

/** @internal What a `join` view shares with its store, and the transaction it joins. */
interface Joining<Handle> {
  readonly settings: Settings<Handle>;
  readonly handle: Handle;
}

function settingsOf<Handle>(driver: SqlDriver<Handle>, options: OrmStoreOptions): Settings<Handle> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError(`${driver.kind.name}: options must be an object`);
  knownOptions(driver.kind.name, options, OPTIONS);
  const { isolation } = options;
  if (isolation !== undefined && !ISOLATION_LEVELS.includes(isolation))
    throw new InvalidOptionsError(`isolation must be one of ${ISOLATION_LEVELS.join(', ')}`);
  const schema = identifier('schema', options.schema, 'public');
  const table = identifier('table', options.table, 'oncely_keys');
  const source = ormSource(driver.kind, (statements) => driver.run(statements));
  return {
    driver,
    plain: new PostgresStore({
      client: source as unknown as Client,
      schema,
      table,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
      // No LISTEN through an ORM: plain-mode waits poll. Transactional duplicates wait on the row itself.
      listen: false,
      notify: false,
      prepare: false,
    }),
    statements: statementsFor(tableTarget(schema, table), { notify: false }),
    schema,
    table,
    clock: options.clock,
    isolation,
    lockTimeoutMs: wholeNumber('lockTimeoutMs', options.lockTimeoutMs, 100, { min: 1, max: 3_600_000 }),
  };
}
