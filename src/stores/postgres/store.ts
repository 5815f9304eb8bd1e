/**
 * @module The PostgreSQL store: one row per key, every transition one statement timed by the server's clock, behind
 * the `Store` contract. Options, statements, rows, waiting and the transactional mode each have a file of their own
 * beside it; this one wires them together.
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
  WaitForOptions,
} from '../../core/store.js';
import { wholeNumber } from '../../core/validate.js';
import { postgresEndpoint } from './endpoint.js';
import { PostgresInspector } from './inspect.js';
import { CompletionListener } from './listener.js';
import { type MigrateOptions, migrate } from './migrate.js';
import { type PostgresStoreOptions, type ResolvedOptions, resolveOptions } from './options.js';
import { beginResultOf, beginValues, completeValues, recordOf } from './rows.js';
import { PostgresRuntime } from './runtime.js';
import { statementsFor, tableTarget } from './sql.js';
import { type TransactionalOptions, TransactionalPostgresStore } from './transactional.js';

// A begin that meets a row committed while it ran runs again with a fresh snapshot; more than a few rounds
// means rows keep changing under it faster than it can look, which a healthy database never does.
const MAX_BEGIN_ROUNDS = 8;
const POLL_START_MS = 10;

const OK: TransitionResult = { kind: 'ok' };
const FENCED: TransitionResult = { kind: 'fenced' };

/**
 * The PostgreSQL store: one row per key in `oncely_keys`, every transition one statement, time from the
 * server. Works over the caller's `pg` Pool (or Client); it never dials on its own. `transactional()` gives the
 * mode where the key's record commits or rolls back with the caller's own writes.
 *
 * @example
 * import pg from 'pg';
 * import { PostgresStore } from 'oncely/postgres';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const store = new PostgresStore({ pool });
 * await store.migrate();
 * const charge = idempotent(chargeCard, { store, key: (order) => order.id });
 */
export class PostgresStore implements Store {
  readonly name = 'postgres';
  /** The server as the pool or client was configured, and the table, for telemetry. */
  readonly endpoint: StoreEndpoint;
  readonly #options: ResolvedOptions;
  readonly #runtime: PostgresRuntime;
  readonly #listener: CompletionListener | undefined;
  #inspector: PostgresInspector | undefined;

  constructor(options: PostgresStoreOptions) {
    const resolved = resolveOptions(options);
    this.#options = resolved;
    this.endpoint = postgresEndpoint(resolved.source, `${resolved.schema}.${resolved.table}`);
    const target = tableTarget(resolved.schema, resolved.table);
    const source = 'pool' in resolved.source ? resolved.source.pool : resolved.source.client;
    const pool = 'pool' in resolved.source ? resolved.source.pool : undefined;
    this.#runtime = new PostgresRuntime({
      source,
      pool,
      target,
      statements: statementsFor(target, { notify: resolved.notify }),
      quiet: statementsFor(target, { notify: false }),
      clock: resolved.clock,
      prepare: resolved.prepare,
    });
    this.#listener = resolved.listen ? new CompletionListener(resolved.source, target.channel) : undefined;
  }

  /** Bounded listing (at most `scanLimit` rows read, down the expiry index) and one record's view, for tools. */
  get inspector(): StoreInspector {
    this.#inspector ??= new PostgresInspector(this.#runtime);
    return this.#inspector;
  }

  /** Creates the schema, table and index if missing (idempotent; safe from several processes at once). */
  async migrate(): Promise<void> {
    const { schema, table, source } = this.#options;
    const options: MigrateOptions = { schema, table };
    await migrate('pool' in source ? source.pool : source.client, options);
  }

  /**
   * A view of this store in transactional mode: the Engine claims the key, runs the user code and stores the
   * outcome in one transaction whose client the code receives as `context.transaction` (see `transactionOf`).
   */
  transactional(options: TransactionalOptions = {}): TransactionalPostgresStore {
    return new TransactionalPostgresStore(this, this.#runtime, options);
  }

  async begin(input: BeginInput): Promise<BeginResult> {
    const { begin } = this.#runtime.statements;
    for (let round = 1; ; round++) {
      const values = beginValues(input, this.#runtime.now());
      const [row] = await this.#runtime.rows('begin', begin, values);
      const result = beginResultOf(row);
      if (result !== 'stale') return result;
      if (round === MAX_BEGIN_ROUNDS) {
        throw new StoreUnavailableError(`postgres begin found the key changing for ${round} rounds in a row`);
      }
    }
  }

  async complete({ key, token, outcome, retentionMs }: CompleteInput): Promise<TransitionResult> {
    const rows = await this.#runtime.rows(
      'complete',
      this.#runtime.statements.complete,
      completeValues(key, token, outcome, retentionMs, this.#runtime.now()),
    );
    return rows.length === 1 ? OK : FENCED;
  }

  async release({ key, token }: ReleaseInput): Promise<TransitionResult> {
    const values = [key, token, this.#runtime.now()];
    const rows = await this.#runtime.rows('release', this.#runtime.statements.release, values);
    return rows.length === 1 ? OK : FENCED;
  }

  async renew({ key, token, leaseMs }: RenewInput): Promise<TransitionResult> {
    const values = [key, token, leaseMs, this.#runtime.now()];
    const rows = await this.#runtime.rows('renew', this.#runtime.statements.renew, values);
    return rows.length === 1 ? OK : FENCED;
  }

  async get(key: string): Promise<KeyRecord | undefined> {
    const [row] = await this.#runtime.rows('get', this.#runtime.statements.get, [key, this.#runtime.now()]);
    return row === undefined ? undefined : recordOf(row);
  }

  async delete(key: string): Promise<boolean> {
    const [row] = await this.#runtime.rows('delete', this.#runtime.statements.delete, [
      key,
      this.#runtime.now(),
    ]);
    return row?.existed === true;
  }

  /**
   * Resolves true once the key is no longer held (completed, released, gone, or its lease ran out), false at the
   * timeout. NOTIFY wakes it early where LISTEN is on; polling (10 ms doubling up to `pollIntervalMs`) is what
   * guarantees it.
   */
  async waitFor(key: string, { timeoutMs, signal }: WaitForOptions): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const aborted =
      signal &&
      new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    let pauseMs = POLL_START_MS;
    // Listen before looking, so a completion between the look and the wait still wakes this waiter.
    await this.#listener?.ready();
    for (;;) {
      const waiting = this.#listener?.next(key);
      try {
        if (await this.#isFree(key)) return true;
        const remaining = deadline - Date.now();
        if (remaining <= 0 || signal?.aborted) return false;
        let timer: NodeJS.Timeout | undefined;
        const paused = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, Math.min(pauseMs, remaining));
        });
        await Promise.race([paused, waiting?.notified, aborted].filter((p) => p !== undefined));
        clearTimeout(timer);
        pauseMs = Math.min(pauseMs * 2, this.#options.pollIntervalMs);
      } finally {
        waiting?.cancel();
      }
    }
  }

  async #isFree(key: string): Promise<boolean> {
    const record = await this.get(key);
    if (record === undefined || record.state !== 'inProgress') return true;
    return record.leaseUntil <= (this.#runtime.now() ?? Date.now());
  }

  /** Counts by state and the table's size on disk (a full scan: for `oncely stats`, not for requests). */
  async stats(): Promise<StoreStats> {
    const [row] = await this.#runtime.rows('stats', this.#runtime.statements.stats, [this.#runtime.now()]);
    const count = (column: string) => Number(row?.[column] ?? 0);
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
   * (default: no limit). Each batch is a short statement of its own: no long lock, no huge DELETE.
   */
  async purgeExpired(options: PurgeOptions = {}): Promise<number> {
    const batchSize = wholeNumber('batchSize', options.batchSize, 1_000, { min: 1, max: 1_000_000 });
    const maxBatches = wholeNumber('maxBatches', options.maxBatches, Number.MAX_SAFE_INTEGER, { min: 1 });
    let removed = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const values = [batchSize, this.#runtime.now()];
      const [row] = await this.#runtime.rows('purge', this.#runtime.statements.purge, values);
      const count = Number(row?.removed ?? 0);
      removed += count;
      if (count < batchSize) break;
    }
    return removed;
  }

  /** Stops listening and returns the listening connection to the pool; the caller's pool stays open. */
  async close(): Promise<void> {
    await this.#listener?.close();
  }
}
