/**
 * @module Kysely's transaction objects for oncely: the `Transaction` that `db.transaction().execute(…)` hands its
 * callback, and how oncely's statements reach its connection. Each statement goes to the connection as a compiled
 * raw query with no parameters, one after the other: Kysely's PostgreSQL connection keeps only a single statement's
 * rows (given several statements in one message, `pg` answers with an array of results and Kysely reads none of
 * them), so a batch would lose the rows the store reads. The queries run without the instance's plugins: a
 * `CamelCasePlugin` would rename the columns the store reads (`expires_at_ms`), a `WithSchemaPlugin` has nothing to
 * add to statements that name their schema.
 */
import type { CompiledQuery, QueryResult, Transaction } from 'kysely';
import { sqlStateOf } from '../../stores/postgres/errors.js';
import type { RawRow } from '../driver.js';

/** What oncely uses of a Kysely object (a `Kysely` or a `Transaction`): its raw query, without plugins. */
export interface KyselyQueries {
  withoutPlugins(): { executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> };
}

/** The parts of a `ControlledTransaction` (`db.startTransaction().execute()`) that say it has ended. */
interface Settled {
  readonly isCommitted?: unknown;
  readonly isRolledBack?: unknown;
}

/**
 * Kysely's transactions, as oncely runs its statements on them. Generic over the database type, so it serves as the
 * handle kind of a `KyselyStore<DB>` for any `DB`.
 */
export const kyselyTransactions = {
  name: 'kysely',
  /** A `Kysely` instance or one of its transactions (`isTransaction` tells them apart): shape checks only. */
  is<DB>(value: unknown): value is Transaction<DB> {
    if (value === null || typeof value !== 'object') return false;
    const db = value as Partial<
      Record<'isTransaction' | 'selectFrom' | 'withoutPlugins' | 'executeQuery', unknown>
    >;
    return (
      typeof db.isTransaction === 'boolean' &&
      typeof db.selectFrom === 'function' &&
      typeof db.withoutPlugins === 'function' &&
      typeof db.executeQuery === 'function'
    );
  },
  /**
   * True for a transaction still open as far as Kysely lets anyone see: a `ControlledTransaction` says when it was
   * committed or rolled back; the callback form's `Transaction` does not (it refuses queries once its callback has
   * finished, so a statement on it fails instead).
   */
  inTransaction(handle: { readonly isTransaction: boolean }): boolean {
    if (!handle.isTransaction) return false;
    const settled = handle as Settled;
    return settled.isCommitted !== true && settled.isRolledBack !== true;
  },
  run: runStatements,
  /** pg's error is what Kysely throws (it only extends the stack): its `code`, when the server sent one. */
  stateOf: sqlStateOf,
};

/** The statements, one query each and in order, on the object's connection; each statement's rows. */
export async function runStatements(db: KyselyQueries, statements: readonly string[]): Promise<RawRow[][]> {
  const queries = db.withoutPlugins();
  const results: RawRow[][] = [];
  for (const text of statements) {
    const { rows } = await queries.executeQuery(rawQuery(text));
    results.push(rows);
  }
  return results;
}

/**
 * What `CompiledQuery.raw(text)` makes, built here because oncely imports nothing of Kysely at run time. An empty
 * parameter list keeps `pg` on the simple query protocol, where the values already written into the text belong.
 */
export function rawQuery(text: string): CompiledQuery<RawRow> {
  return {
    sql: text,
    parameters: [],
    query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
    queryId: { queryId: 'oncely' },
  };
}
