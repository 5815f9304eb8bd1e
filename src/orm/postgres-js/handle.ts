/**
 * @module postgres.js (porsager's `postgres`) transactions as oncely sees them: the `TransactionSql` that
 * `sql.begin(fn)` and `tx.savepoint(fn)` give, recognized by shape, with oncely's statements sent through
 * `unsafe(text).simple()` (several in one message, one round trip).
 */
import type { TransactionSql } from 'postgres';
import type { RawRow } from '../driver.js';
import { batchText, rowsPerStatement } from './batch.js';

const hasFunction = (value: object, name: string): boolean =>
  typeof (value as Record<string, unknown>)[name] === 'function';

/**
 * Whether `value` is postgres.js's `sql`: a tagged-template function carrying `unsafe`, `json` and `array`, and one
 * of `begin` (the top-level `Sql`), `savepoint` (inside a transaction) or `release` (`sql.reserve()`'s connection).
 * Knex's instance is a function too, but has no `unsafe`.
 */
export function isPostgresJs(value: unknown): boolean {
  if (typeof value !== 'function') return false;
  if (!hasFunction(value, 'unsafe') || !hasFunction(value, 'json') || !hasFunction(value, 'array'))
    return false;
  return hasFunction(value, 'begin') || hasFunction(value, 'savepoint') || hasFunction(value, 'release');
}

/** The SQLSTATE of a server error (postgres.js's `PostgresError`, pg's `DatabaseError`): its `code`, beside a `severity`. */
export function postgresStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  // postgres.js's own failures (CONNECTION_CLOSED, UNSAFE_TRANSACTION, …) carry a `code` too, but no severity.
  return typeof severity === 'string' && typeof code === 'string' ? code : undefined;
}

/**
 * postgres.js's transactions. Generic methods, so this one object is the handle kind of a `PostgresJsStore` of any
 * type map. `is` also takes the top-level `Sql` and a reserved connection (so `store.join(sql)` is refused as not in
 * a transaction rather than as some other object); `inTransaction` tells them apart: a transaction's `sql` is the
 * only one with `savepoint`, which postgres.js gives to `begin`'s and `savepoint`'s callbacks and nowhere else.
 */
export const postgresJsTransactions = {
  name: 'postgres.js',
  is<Types extends Record<string, unknown>>(value: unknown): value is TransactionSql<Types> {
    return isPostgresJs(value);
  },
  inTransaction<Types extends Record<string, unknown>>(handle: TransactionSql<Types>): boolean {
    return hasFunction(handle, 'savepoint');
  },
  async run<Types extends Record<string, unknown>>(
    handle: TransactionSql<Types>,
    statements: readonly string[],
  ): Promise<RawRow[][]> {
    if (statements.length === 0) return [];
    // `.simple()`: the simple query protocol, which takes several statements in one message (no parameters
    // needed: the values are in the text already).
    const answer: unknown = await handle.unsafe(batchText(statements)).simple();
    return rowsPerStatement(answer, statements.length);
  },
  stateOf: postgresStateOf,
};
