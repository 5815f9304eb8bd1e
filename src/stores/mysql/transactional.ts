/**
 * @module The MySQL store in transactional mode (`store.transactional()`): claims go through `beginTransaction`,
 * so a key's record commits or rolls back with the caller's own writes, in a transaction the store starts on a
 * pooled connection or in one the caller opened (`connection`, joined with a savepoint); every other method is the
 * base store's.
 */
import type { PoolConnection as MySql2Connection } from 'mysql2/promise';
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
} from '../../core/store.js';
import { knownOptions, wholeNumber } from '../../core/validate.js';
import { type JoinedConnection, joinedConnectionOf, type MySqlConnection } from './driver.js';
import type { MySqlRuntime } from './runtime.js';
import { beginJoined } from './transaction-join.js';
import { beginTransaction, type TransactionSettings } from './transaction-run.js';

export interface TransactionalOptions {
  /**
   * Join this connection's open transaction instead of starting one: the claim, the user code and the outcome go
   * in a savepoint of it, and nothing is durable until you commit. A `mysql2/promise` or `mariadb` connection you
   * began a transaction on (`beginTransaction()`, or `START TRANSACTION`). Default: each execution checks a
   * connection out of the store's pool and starts the transaction itself.
   */
  readonly connection?: MySqlConnection;
  /**
   * How long a claim waits for another open transaction that holds the key when the request itself does not
   * wait (`waitMs` 0), before answering in progress; a request with `waitMs` waits that long instead. MySQL
   * bounds row lock waits in whole seconds (`innodb_lock_wait_timeout`), so both are rounded up to seconds, and
   * the least is 1 s. Default 1,000 ms.
   */
  readonly lockWaitMs?: number;
}

/**
 * The connection of a transactional claim, from the context oncely hands your code: write through it and your
 * rows commit or roll back with the key's record. Give the type of your driver's connection (`PoolConnection`
 * of `mysql2/promise`, the default, or of `mariadb`). Throws when the store is not transactional, because writes
 * through any other connection would commit on their own.
 */
export function connectionOf<C extends MySqlConnection = MySql2Connection>(
  context: { readonly transaction?: unknown } | null | undefined,
): C {
  const transaction = context?.transaction;
  if (transaction === null || typeof transaction !== 'object' || !('query' in transaction)) {
    throw new InvalidOptionsError(
      'connectionOf: no transaction in this context; use store.transactional() as the store',
    );
  }
  return transaction as C;
}

/**
 * A MySqlStore in transactional mode: the Engine claims each key through `beginTransaction`, so the key's record
 * commits or rolls back with the user's writes, made through `context.transaction` (`connectionOf`). Every other
 * method is the base store's. Create it with `MySqlStore#transactional()`.
 */
export class TransactionalMySqlStore implements Store {
  readonly name = 'mysql';
  /** The store this is a view of. */
  readonly base: Store;
  readonly #runtime: MySqlRuntime;
  readonly #settings: TransactionSettings;
  readonly #joined: JoinedConnection | undefined;

  get endpoint(): StoreEndpoint | undefined {
    return this.base.endpoint;
  }

  /** The base store's: the records are the same rows. */
  get inspector(): StoreInspector | undefined {
    return this.base.inspector;
  }

  /** @internal Use `MySqlStore#transactional()`. */
  constructor(base: Store, runtime: MySqlRuntime, options: TransactionalOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('transactional: options must be an object');
    }
    knownOptions('transactional', options, ['connection', 'lockWaitMs']);
    this.#joined = options.connection === undefined ? undefined : joinedConnectionOf(options.connection);
    this.base = base;
    this.#runtime = runtime;
    this.#settings = {
      lockWaitMs: wholeNumber('lockWaitMs', options.lockWaitMs, 1_000, { min: 0, max: 3_600_000 }),
    };
  }

  beginTransaction(input: TransactionBeginInput): Promise<TransactionBeginResult> {
    if (this.#joined !== undefined) return beginJoined(this.#runtime, this.#settings, this.#joined, input);
    return beginTransaction(this.#runtime, this.#settings, input);
  }

  begin(input: BeginInput): Promise<BeginResult> {
    return this.base.begin(input);
  }
  complete(input: CompleteInput): Promise<TransitionResult> {
    return this.base.complete(input);
  }
  release(input: ReleaseInput): Promise<TransitionResult> {
    return this.base.release(input);
  }
  renew(input: RenewInput): Promise<TransitionResult> {
    return this.base.renew(input);
  }
  get(key: string): Promise<KeyRecord | undefined> {
    return this.base.get(key);
  }
  delete(key: string): Promise<boolean> {
    return this.base.delete(key);
  }
  stats(): Promise<StoreStats> {
    return this.base.stats!();
  }
  purgeExpired(options?: PurgeOptions): Promise<number> {
    return this.base.purgeExpired!(options);
  }
}
