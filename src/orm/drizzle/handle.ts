/**
 * @module Drizzle's PostgreSQL database objects as oncely sees them: the transaction `db.transaction(async (tx) => …)`
 * hands its callback (a `PgTransaction`), told from the db itself (a `PgDatabase`) by Drizzle's own class marks,
 * with oncely's statements sent through `tx.execute(text)` — several in one simple-query message, on either driver
 * underneath (`drizzle-orm/node-postgres` answers with pg's results, `drizzle-orm/postgres-js` with postgres.js's).
 */
import type { RawRow } from '../driver.js';
import { batchText, rowsPerStatement } from '../postgres-js/batch.js';
import { postgresStateOf } from '../postgres-js/handle.js';

/**
 * What oncely uses of a Drizzle PostgreSQL db or transaction: `execute` (which takes a plain string, as
 * `execute(query: SQLWrapper | string)` in 0.45, so nothing of Drizzle is imported to build a query) and
 * `transaction`. Any Drizzle `PgDatabase`
 * (NodePgDatabase, PostgresJsDatabase, with or without a schema) and any `PgTransaction` has both.
 */
export interface DrizzleDatabaseLike {
  execute(query: string): PromiseLike<unknown>;
  transaction<T>(work: (tx: unknown) => Promise<T>, config?: DrizzleTransactionConfig): Promise<T>;
}

/**
 * What oncely passes to `db.transaction(fn, config)`: Drizzle's `PgTransactionConfig`, written out here so that
 * oncely's declarations load none of Drizzle's (they reach into every dialect Drizzle has, and fail to check
 * without `skipLibCheck` unless mysql2, gel, … are installed).
 */
export interface DrizzleTransactionConfig {
  readonly isolationLevel?: 'read uncommitted' | 'read committed' | 'repeatable read' | 'serializable';
  readonly accessMode?: 'read only' | 'read write';
  readonly deferrable?: boolean;
}

/**
 * The transaction type of a Drizzle db: what its `transaction` passes to the callback, with the db's own schema
 * and driver (`PgTransaction<NodePgQueryResultHKT, typeof schema, …>`), so the handler's `tx` type-checks as inside
 * `db.transaction(async (tx) => …)`.
 */
export type DrizzleTransactionOf<DB extends DrizzleDatabaseLike> = Parameters<
  Parameters<DB['transaction']>[0]
>[0];

// Drizzle marks its classes with this (a registered symbol, so every copy of Drizzle in node_modules agrees) and
// reads it to check objects across copies (`is(value, PgTransaction)`): the same check, done without importing it.
const ENTITY_KIND = Symbol.for('drizzle:entityKind');

/** The Drizzle class marks of `value`'s class and its ancestors: `['NodePgTransaction', 'PgTransaction', …]`. */
export function entityKindsOf(value: object): string[] {
  const kinds: string[] = [];
  let type: unknown = Object.getPrototypeOf(value)?.constructor;
  while (typeof type === 'function') {
    if (Object.hasOwn(type, ENTITY_KIND)) {
      const kind = (type as unknown as Record<symbol, unknown>)[ENTITY_KIND];
      if (typeof kind === 'string') kinds.push(kind);
    }
    type = Object.getPrototypeOf(type);
  }
  return kinds;
}

/** A Drizzle PostgreSQL db or transaction: Drizzle's `PgDatabase` mark (transactions extend it) and its methods. */
function isDrizzle(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const { execute, transaction } = value as Partial<Record<'execute' | 'transaction', unknown>>;
  if (typeof execute !== 'function' || typeof transaction !== 'function') return false;
  return entityKindsOf(value).includes('PgDatabase');
}

/** The SQLSTATE of a failed `execute`: Drizzle wraps the driver's error (`DrizzleQueryError`) as its `cause`. */
function drizzleStateOf(error: unknown): string | undefined {
  for (let at: unknown = error, depth = 0; typeof at === 'object' && at !== null && depth < 3; depth++) {
    const state = postgresStateOf(at);
    if (state !== undefined) return state;
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Drizzle's PostgreSQL transactions. Generic methods, so this one object is the handle kind of a `DrizzleStore` on
 * any db (its transaction type is whatever the db's `transaction` gives). `is` also takes the db itself (so
 * `store.join(db)` is refused as not in a transaction rather than as some other object).
 */
export const drizzleTransactions = {
  name: 'drizzle',
  is<Tx>(value: unknown): value is Tx {
    return isDrizzle(value);
  },
  /**
   * True for a `PgTransaction` (also a nested one, `tx.transaction(…)`, a savepoint), false for the db. Drizzle
   * keeps no state on a transaction object: one whose callback has finished still says true, and a statement on it
   * then runs on a connection back in the pool (node-postgres) or fails (postgres.js).
   */
  inTransaction<Tx>(handle: Tx): boolean {
    return typeof handle === 'object' && handle !== null && entityKindsOf(handle).includes('PgTransaction');
  },
  async run<Tx>(handle: Tx, statements: readonly string[]): Promise<RawRow[][]> {
    if (statements.length === 0) return [];
    // A string goes to the driver as it is (`sql.raw`), with no parameters: pg and postgres.js then use the simple
    // query protocol, which takes the several statements of the batch in one message.
    const answer = await (handle as DrizzleDatabaseLike).execute(batchText(statements));
    return rowsPerStatement(answer, statements.length);
  },
  stateOf: drizzleStateOf,
};
