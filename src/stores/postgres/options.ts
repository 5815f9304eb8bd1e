/**
 * @module The PostgreSQL store's options, their defaults, and their checks: validated once when the store is built,
 * so a bad pool, name or flag fails at startup with a message that says what to pass instead.
 */
import type { Client, Pool } from 'pg';
import { InvalidOptionsError } from '../../core/errors.js';
import { sqlName } from '../../core/sql-names.js';
import { knownOptions, optionalFunction, wholeNumber } from '../../core/validate.js';

export interface PostgresStoreOptions {
  /** A `pg` Pool the caller created and owns. Give `pool` or `client`. Transactional mode needs a pool. */
  readonly pool?: Pool;
  /** Or one connected `pg` Client the caller owns (its queries queue behind each other). */
  readonly client?: Client;
  /** Schema of the table. Default `public`. */
  readonly schema?: string;
  /** Table name. Default `oncely_keys`. */
  readonly table?: string;
  /**
   * Milliseconds since the epoch, for tests (the conformance suite's fake clock). Default: none, and every
   * statement reads the server's `clock_timestamp()`, so application servers' clocks never matter.
   */
  readonly clock?: () => number;
  /**
   * Wake `waitFor` through LISTEN on one connection taken from the pool. Turn it off behind a transaction pooler
   * (PgBouncer `pool_mode = transaction`), where LISTEN does not work; waits then poll. Default true.
   */
  readonly listen?: boolean;
  /** Send NOTIFY on complete, release and delete (delivered at commit). Default true. */
  readonly notify?: boolean;
  /** Longest pause between two polls while `waitFor` waits (polls start at 10 ms and double). Default 250 ms. */
  readonly pollIntervalMs?: number;
  /**
   * Prepare each statement once per connection instead of parsing and planning it on every call (about half the
   * server CPU of a begin). Turn it off behind PgBouncer in transaction mode before 1.21, which cannot route
   * prepared statements. Default true.
   */
  readonly prepare?: boolean;
}

export interface ResolvedOptions {
  readonly source: { readonly pool: Pool } | { readonly client: Client };
  readonly schema: string;
  readonly table: string;
  readonly clock: (() => number) | undefined;
  readonly listen: boolean;
  readonly notify: boolean;
  readonly pollIntervalMs: number;
  readonly prepare: boolean;
}

const KNOWN = ['pool', 'client', 'schema', 'table', 'clock', 'listen', 'notify', 'pollIntervalMs', 'prepare'];

/** A schema or table name, checked as every tool beside the store checks it (core/sql-names.ts). */
export const identifier = sqlName;

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new InvalidOptionsError(`${name} must be true or false`);
  return value;
}

const isQueryable = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && typeof (value as { query?: unknown }).query === 'function';

export function resolveOptions(options: PostgresStoreOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionsError('PostgresStore: options with a pg pool are required');
  }
  knownOptions('PostgresStore', options, KNOWN);
  const { pool, client } = options;
  if ((pool === undefined) === (client === undefined)) {
    throw new InvalidOptionsError(
      'PostgresStore: give exactly one of pool (a pg Pool) or client (a pg Client)',
    );
  }
  if (!isQueryable(pool ?? client))
    throw new InvalidOptionsError('PostgresStore: pool/client must be from pg');
  if (pool !== undefined && typeof pool.connect !== 'function') {
    throw new InvalidOptionsError('PostgresStore: pool must be a pg Pool');
  }
  optionalFunction('clock', options.clock);
  return {
    source: pool !== undefined ? { pool } : { client: client! },
    schema: identifier('schema', options.schema, 'public'),
    table: identifier('table', options.table, 'oncely_keys'),
    clock: options.clock,
    listen: flag('listen', options.listen, true),
    notify: flag('notify', options.notify, true),
    pollIntervalMs: wholeNumber('pollIntervalMs', options.pollIntervalMs, 250, { min: 10 }),
    prepare: flag('prepare', options.prepare, true),
  };
}
