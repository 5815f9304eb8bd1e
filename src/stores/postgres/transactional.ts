/**
 * @module The PostgreSQL store in transactional mode (`store.transactional()`): claims go through
 * `beginTransaction`, so a key's record commits or rolls back with the caller's own writes; every other method is
 * the base store's.
 */
import type { Client, PoolClient } from 'pg';
import { InvalidOptionsError } from '../../core/errors.js';
import type { StoreInspector } from '../../core/inspection.js';
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
} from '../../core/store.js';
import { knownOptions, wholeNumber } from '../../core/validate.js';
import type { PostgresRuntime } from './runtime.js';
import { beginTransaction, type IsolationLevel, type TransactionSettings } from './transaction-run.js';

export interface TransactionalOptions {
  /**
   * Join this open transaction of the caller instead of starting one: the claim, the user code and the outcome
   * go in a savepoint, and nothing is durable until the caller commits. Default: each execution checks a client
   * out of the store's pool and runs `BEGIN … COMMIT` itself.
   */
  readonly client?: Client | PoolClient;
  /**
   * How long a claim waits for another open transaction that holds the key when the request itself does not
   * wait (`waitMs` 0), before answering in progress. A request with `waitMs` waits that long instead.
   * Default 100 ms.
   */
  readonly lockTimeoutMs?: number;
  /** Isolation level of the transactions the store starts. Default `read committed`. */
  readonly isolation?: IsolationLevel;
  /**
   * NOTIFY when an outcome commits. Transactional duplicates need none (they wait on the row itself), and a NOTIFY
   * takes a database-wide lock at commit, so it is off unless plain-mode callers wait on the same keys through
   * LISTEN. Default false.
   */
  readonly notify?: boolean;
}

const ISOLATION_LEVELS: readonly IsolationLevel[] = ['read committed', 'repeatable read', 'serializable'];

/**
 * A PostgresStore in transactional mode: the Engine claims each key through `beginTransaction`, so the key's
 * record commits or rolls back with the user's writes, made through `context.transaction` (`transactionOf`).
 * Every other method is the base store's. Create it with `PostgresStore#transactional()`.
 */
export class TransactionalPostgresStore implements Store {
  readonly name = 'postgres';
  /** The store this is a view of: it owns the LISTEN connection, so close that one when done. */
  readonly base: Store;
  readonly #base: Store;
  readonly #runtime: PostgresRuntime;
  readonly #settings: TransactionSettings;

  get endpoint(): StoreEndpoint | undefined {
    return this.#base.endpoint;
  }

  /** The base store's: the records are the same rows. */
  get inspector(): StoreInspector | undefined {
    return this.#base.inspector;
  }

  /** @internal Use `PostgresStore#transactional()`. */
  constructor(base: Store, runtime: PostgresRuntime, options: TransactionalOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('transactional: options must be an object');
    }
    knownOptions('transactional', options, ['client', 'lockTimeoutMs', 'isolation', 'notify']);
    const { client, isolation = 'read committed' } = options;
    if (client !== undefined && (client === null || typeof client.query !== 'function')) {
      throw new InvalidOptionsError('transactional: client must be a pg Client or PoolClient');
    }
    if (client === undefined && runtime.pool === undefined) {
      throw new InvalidOptionsError(
        'transactional: the store was given one Client; give it a pg Pool, or pass the client to join here',
      );
    }
    if (!ISOLATION_LEVELS.includes(isolation)) {
      throw new InvalidOptionsError(`transactional: isolation must be one of ${ISOLATION_LEVELS.join(', ')}`);
    }
    this.base = base;
    this.#base = base;
    this.#runtime = runtime;
    this.#settings = {
      joined: client,
      isolation,
      lockTimeoutMs: wholeNumber('lockTimeoutMs', options.lockTimeoutMs, 100, { min: 1, max: 3_600_000 }),
      notify: options.notify ?? false,
    };
    if (typeof this.#settings.notify !== 'boolean')
      throw new InvalidOptionsError('notify must be true or false');
  }

  beginTransaction(input: TransactionBeginInput): Promise<TransactionBeginResult> {
    return beginTransaction(this.#runtime, this.#settings, input);
  }

  begin(input: BeginInput): Promise<BeginResult> {
    return this.#base.begin(input);
  }
  complete(input: CompleteInput): Promise<TransitionResult> {
    return this.#base.complete(input);
  }
  release(input: ReleaseInput): Promise<TransitionResult> {
    return this.#base.release(input);
  }
  renew(input: RenewInput): Promise<TransitionResult> {
    return this.#base.renew(input);
  }
  get(key: string): Promise<KeyRecord | undefined> {
    return this.#base.get(key);
  }
  delete(key: string): Promise<boolean> {
    return this.#base.delete(key);
  }
  waitFor(key: string, options: WaitForOptions): Promise<boolean> {
    return this.#base.waitFor!(key, options);
  }
  stats(): Promise<StoreStats> {
    return this.#base.stats!();
  }
  purgeExpired(options?: PurgeOptions): Promise<number> {
    return this.#base.purgeExpired!(options);
  }
  /** The base store owns the LISTEN connection; closing a view leaves it to the base's `close()`. */
  async close(): Promise<void> {}
}
