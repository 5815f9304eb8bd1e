/**
 * @module The MySQL store: one row per key, every transition one round trip (a procedure call for begin and
 * delete, one UPDATE for the others), time from the server. Works over the caller's mysql2 or mariadb pool.
 */
import { StoreUnavailableError } from '../../core/errors.js';
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
  TransitionResult,
} from '../../core/store.js';
import { wholeNumber } from '../../core/validate.js';
import { mysqlEndpoint } from './endpoint.js';
import { MySqlInspector } from './inspect.js';
import { migrate } from './migrate.js';
import { type MySqlStoreOptions, resolveOptions } from './options.js';
import { beginResultOf, beginValues, completeValues, keyBytes, numberOf, recordOf } from './rows.js';
import { MySqlRuntime } from './runtime.js';
import { TransactionalMySqlStore, type TransactionalOptions } from './transactional.js';

// begin answers `stale` after 8 rounds inside the server; a few more calls cover a burst, more is an outage.
const MAX_BEGIN_CALLS = 4;
// What a claim is told when a row lock wait ran out: an open transaction (transactional mode) holds the key.
const BUSY_RETRY_AFTER_MS = 1_000;

const OK: TransitionResult = { kind: 'ok' };
const FENCED: TransitionResult = { kind: 'fenced' };

/**
 * The MySQL / MariaDB store: one row per key in `oncely_keys`, every transition one round trip, time from the
 * server. Works over the caller's `mysql2/promise` or `mariadb` pool; it never dials on its own.
 * `transactional()` gives the mode where the key's record commits or rolls back with the caller's own writes.
 *
 * @example
 * import mysql from 'mysql2/promise';
 * import { MySqlStore } from 'oncely/mysql';
 * const store = new MySqlStore({ pool: mysql.createPool({ uri: process.env.MYSQL_URL }) });
 * await store.migrate();
 */
export class MySqlStore implements Store {
  readonly name = 'mysql';
  /** The server as the pool was configured, and the table, for telemetry. */
  readonly endpoint: StoreEndpoint;
  readonly #runtime: MySqlRuntime;
  #inspector: MySqlInspector | undefined;

  constructor(options: MySqlStoreOptions) {
    const { driver, table, clock } = resolveOptions(options);
    this.#runtime = new MySqlRuntime(driver, table, clock);
    this.endpoint = mysqlEndpoint(driver, table);
  }

  /** Bounded listing (at most `scanLimit` rows read, down the expiry index) and one record's view, for tools. */
  get inspector(): StoreInspector {
    this.#inspector ??= new MySqlInspector(this.#runtime);
    return this.#inspector;
  }

  /** Creates the table and its procedures if missing (idempotent; safe from several processes at once). */
  async migrate(): Promise<void> {
    await migrate(this.#runtime.driver.pool, { table: this.#runtime.table });
  }

  /**
   * A view of this store in transactional mode: the Engine claims the key, runs the user code and stores the
   * outcome in one transaction whose connection the code receives as `context.transaction` (`connectionOf`).
   */
  transactional(options: TransactionalOptions = {}): TransactionalMySqlStore {
    return new TransactionalMySqlStore(this, this.#runtime, options);
  }

  async begin(input: BeginInput): Promise<BeginResult> {
    for (let call = 1; ; call++) {
      const values = beginValues(input, this.#runtime.now());
      const { rows } = await this.#runtime.raw('begin', this.#runtime.statements.begin, values);
      const result = beginResultOf(rows[0]);
      if (result === 'busy') {
        return { kind: 'inProgress', retryAfterMs: Math.min(input.leaseMs, BUSY_RETRY_AFTER_MS), attempt: 1 };
      }
      if (result !== 'stale') return result;
      if (call === MAX_BEGIN_CALLS) {
        throw new StoreUnavailableError(`mysql begin found the key changing for ${call} calls in a row`);
      }
    }
  }

  async complete({ key, token, outcome, retentionMs }: CompleteInput): Promise<TransitionResult> {
    const values = completeValues(key, token, outcome, retentionMs, this.#runtime.now());
    const { affectedRows } = await this.#runtime.run('complete', this.#runtime.statements.complete, values);
    return affectedRows === 1 ? OK : FENCED;
  }

  async release({ key, token }: ReleaseInput): Promise<TransitionResult> {
    const values = { key: keyBytes(key), token, now: this.#runtime.now() };
    const { affectedRows } = await this.#runtime.run('release', this.#runtime.statements.release, values);
    return affectedRows === 1 ? OK : FENCED;
  }

  async renew({ key, token, leaseMs }: RenewInput): Promise<TransitionResult> {
    const values = { key: keyBytes(key), token, lease: leaseMs, now: this.#runtime.now() };
    const { affectedRows } = await this.#runtime.run('renew', this.#runtime.statements.renew, values);
    return affectedRows === 1 ? OK : FENCED;
  }

  async get(key: string): Promise<KeyRecord | undefined> {
    const values = { key: keyBytes(key), now: this.#runtime.now() };
    const { rows } = await this.#runtime.run('get', this.#runtime.statements.get, values);
    return rows[0] === undefined ? undefined : recordOf(rows[0]);
  }

  async delete(key: string): Promise<boolean> {
    const values = [keyBytes(key), this.#runtime.now()];
    const { rows } = await this.#runtime.raw('delete', this.#runtime.statements.delete, values);
    return Number(rows[0]?.existed ?? 0) === 1;
  }

  /** Counts by state and the table's size (a full scan: for `oncely stats`, not for requests). */
  async stats(): Promise<StoreStats> {
    const values = { now: this.#runtime.now(), table: this.#runtime.table };
    const { rows } = await this.#runtime.run('stats', this.#runtime.statements.stats, values);
    const count = (column: string) => numberOf(rows[0]?.[column] ?? 0, column);
    return {
      records: count('records'),
      inProgress: count('in_progress'),
      completed: count('completed'),
      released: count('released'),
      bytes: count('bytes'),
    };
  }

  /**
   * Deletes expired rows, `batchSize` per statement (default 1,000), until none are left or `maxBatches` ran
   * (default: no limit). Each batch is a short statement of its own (`DELETE … ORDER BY … LIMIT`).
   */
  async purgeExpired(options: PurgeOptions = {}): Promise<number> {
    const batchSize = wholeNumber('batchSize', options.batchSize, 1_000, { min: 1, max: 1_000_000 });
    const maxBatches = wholeNumber('maxBatches', options.maxBatches, Number.MAX_SAFE_INTEGER, { min: 1 });
    let removed = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const values = { batch: batchSize, now: this.#runtime.now() };
      const { affectedRows } = await this.#runtime.run('purge', this.#runtime.statements.purge, values);
      removed += affectedRows;
      if (affectedRows < batchSize) break;
    }
    return removed;
  }
}
