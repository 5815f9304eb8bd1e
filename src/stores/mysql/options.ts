/**
 * @module The MySQL store's options, checked once at construction.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions, optionalFunction } from '../../core/validate.js';
import { type Driver, driverOf, type MySqlPool } from './driver.js';

export interface MySqlStoreOptions {
  /**
   * A pool the caller created and owns: `mysql.createPool(…)` from `mysql2/promise`, or `mariadb.createPool(…)`
   * from the `mariadb` connector. The store never dials on its own.
   */
  readonly pool: MySqlPool;
  /** Table name, in the pool's database. Default `oncely_keys`. */
  readonly table?: string;
  /**
   * Milliseconds since the epoch, for tests (the conformance suite's fake clock). Default: none, and every
   * statement reads the server's UTC clock, so application servers' clocks never matter.
   */
  readonly clock?: () => number;
}

export interface ResolvedOptions {
  readonly driver: Driver;
  readonly table: string;
  readonly clock: (() => number) | undefined;
}

const KNOWN = ['pool', 'table', 'clock'];

/**
 * A table name: 1 to 64 characters (MySQL's limit; a longer one fails at CREATE), no NUL, and no trailing space
 * (MySQL refuses such names).
 */
export function tableName(value: unknown, fallback = 'oncely_keys'): string {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'string' ||
    value === '' ||
    value.length > 64 ||
    value.includes('\0') ||
    value.endsWith(' ')
  ) {
    throw new InvalidOptionsError(`table must be a name of 1 to 64 characters, got ${String(value)}`);
  }
  return value;
}

export function resolveOptions(options: MySqlStoreOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionsError('MySqlStore: options with a mysql2 or mariadb pool are required');
  }
  knownOptions('MySqlStore', options, KNOWN);
  optionalFunction('clock', options.clock);
  return { driver: driverOf(options.pool), table: tableName(options.table), clock: options.clock };
}
