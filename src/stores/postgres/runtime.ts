/**
 * @module What a PostgreSQL store and its transactional views share: where queries go, the table's statements,
 * prepared-statement names, and running a statement with the store's type parsers, retrying a serialization conflict
 * and reporting failures as store errors.
 */
import { createHash } from 'node:crypto';
import type { Client, Pool, PoolClient, QueryConfig, QueryResult } from 'pg';
import { checkout } from './checkout.js';
import { isRetryableConflict, storeError } from './errors.js';
import { type Row, storeTypes } from './rows.js';
import type { SqlValue, Statements, TableTarget } from './sql.js';

/** Anything that runs a query: the caller's Pool, their Client, or a client checked out for a transaction. */
export type Queryable = Pick<Client, 'query'> | Pick<Pool, 'query'>;

/**
 * What a PostgresStore and its transactional views share: where queries go, the statements of its table, and
 * the clock. Not public API.
 */
export class PostgresRuntime {
  /** Autocommit statements go here (the caller's Pool or Client). */
  readonly source: Queryable;
  /** Transactions check clients out of this; undefined when the caller gave one Client. */
  readonly pool: Pool | undefined;
  readonly target: TableTarget;
  /** The statements, with NOTIFY where the store's `notify` option asks for it. */
  readonly statements: Statements;
  /** The same statements without NOTIFY (transactional mode's default). */
  readonly quiet: Statements;
  readonly clock: (() => number) | undefined;
  /** Whether statements are prepared once per connection (named) instead of parsed and planned every time. */
  readonly prepare: boolean;
  readonly #names = { protocol: new Map<string, string>(), sql: new Map<string, string>() };

  constructor(settings: {
    source: Queryable;
    pool: Pool | undefined;
    target: TableTarget;
    statements: Statements;
    quiet: Statements;
    clock: (() => number) | undefined;
    prepare: boolean;
  }) {
    this.source = settings.source;
    this.pool = settings.pool;
    this.target = settings.target;
    this.statements = settings.statements;
    this.quiet = settings.quiet;
    this.clock = settings.clock;
    this.prepare = settings.prepare;
  }

  /**
   * The name a statement is prepared under: derived from its text, so two stores (two tables) never collide
   * and a new version of a statement never meets an old preparation on a long-lived connection.
   */
  nameOf(text: string, kind: 'protocol' | 'sql'): string {
    const names = this.#names[kind];
    let name = names.get(text);
    if (name === undefined) {
      name = `oncely_${kind === 'sql' ? 's' : 'p'}_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
      names.set(text, name);
    }
    return name;
  }

  /** The time to pass as the statements' `now ms` parameter; null lets the server's clock decide. */
  now(): number | null {
    return this.clock === undefined ? null : this.clock();
  }

  /** Runs one parameterized statement with the store's own type parsers; failures become `OncelyError`s. */
  async rows(operation: string, text: string, values: readonly SqlValue[], on: Queryable = this.source) {
    const config = {
      text,
      values: values.map(toParameter),
      types: storeTypes,
      ...(this.prepare ? { name: this.nameOf(text, 'protocol') } : {}),
    };
    // On a pool each statement is a transaction of its own, so one that lost a race can simply run again.
    const alone = on === this.source && isPool(on);
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await on.query(config as QueryConfig);
        return result.rows as Row[];
      } catch (error) {
        // Under a default isolation of repeatable read or serializable, a statement that meets a concurrent
        // writer of its row fails with 40001 (or 40P01). That is a race between duplicates, not an outage: run
        // again, the statement sees the other writer's result (a replay, in progress, fenced).
        if (alone && isRetryableConflict(error) && attempt < CONFLICT_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * attempt * 2));
          continue;
        }
        throw storeError(operation, error);
      }
    }
  }

  /**
   * Sends several statements as one simple-query message (one round trip) and returns each one's rows. Values
   * must already be inlined (see `inlineParameters`). Errors are the driver's, unmapped: callers decide.
   */
  async script(client: Queryable, text: string): Promise<Row[][]> {
    const result = (await client.query({ text, types: storeTypes } as QueryConfig)) as
      | QueryResult
      | QueryResult[];
    return (Array.isArray(result) ? result : [result]).map((each) => each.rows as Row[]);
  }

  /** A client of its own for a transaction, with `onError` listening from the moment it is handed out. */
  async connect(onError: (error: Error) => void): Promise<PoolClient> {
    if (this.pool === undefined) {
      throw storeError('transaction', new Error('transactional mode needs a pg Pool (or a client per call)'));
    }
    try {
      return await checkout(this.pool, onError);
    } catch (error) {
      throw storeError('connect', error);
    }
  }
}

// Serialization failures in a row before a statement is reported as failed (each retry sees a newer snapshot).
const CONFLICT_ATTEMPTS = 10;

const isPool = (queryable: Queryable): boolean =>
  typeof (queryable as { totalCount?: unknown }).totalCount === 'number';

function toParameter(value: SqlValue): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : value;
}
