/**
 * @module The postgres.js driver: oncely's statements on the caller's `sql` (porsager's `postgres`), and its
 * transactions opened with `sql.begin('isolation level …', fn)`, so the handler's `tx` is a plain postgres.js
 * transaction.
 */
import type { Sql, TransactionSql } from 'postgres';
import { InvalidOptionsError } from '../../core/errors.js';
import type { RawRow, SqlDriver, TransactionOptions } from '../driver.js';
import { rowsPerStatement } from './batch.js';
import { isPostgresJs, postgresJsTransactions } from './handle.js';

/** The part of a `sql` that says how it transforms results (`postgres(url, { transform })`, parsed). */
export interface TransformingSql {
  readonly options?: {
    readonly transform?: Partial<Record<'column' | 'value' | 'row', { readonly from?: unknown } | undefined>>;
  };
}

/**
 * Refuses a `transform` that changes what comes back: oncely reads its rows by the column names and values the
 * server sends, and `postgres.camel` (or any `column`, `value` or `row` transform) renames or rewrites them.
 * Transforms of what goes out (`to`) are harmless: oncely sends no parameters.
 */
export function assertNoResultTransform(sql: TransformingSql, owner: string): void {
  const transform = sql.options?.transform;
  const changed = (['column', 'value', 'row'] as const).filter(
    (part) => transform?.[part]?.from !== undefined,
  );
  if (changed.length > 0) {
    throw new InvalidOptionsError(
      `${owner}: the sql has a ${changed.join(', ')} transform of results (postgres.camel, …), which renames or ` +
        "rewrites the columns oncely reads; give oncely a postgres() of the same database without 'transform'",
    );
  }
}

/** The driver on the caller's top-level `sql` (the pool `postgres(url)` returns); the caller keeps it and ends it. */
export function postgresJsDriver<Types extends Record<string, unknown>>(
  sql: Sql<Types>,
): SqlDriver<TransactionSql<Types>> {
  if (!isPostgresJs(sql) || typeof (sql as { begin?: unknown }).begin !== 'function') {
    throw new InvalidOptionsError(
      'PostgresJsStore: pass the top-level sql that postgres(url) returns (a transaction or a reserved connection cannot open transactions)',
    );
  }
  assertNoResultTransform(sql, 'PostgresJsStore');

  return {
    kind: postgresJsTransactions,

    async run(statements: readonly string[]): Promise<RawRow[][]> {
      // One message per statement, not one for all: outside a transaction block PostgreSQL runs a message of
      // several statements as one implicit transaction, and these are to commit each on its own.
      const rows: RawRow[][] = [];
      for (const statement of statements) {
        const answer: unknown = await sql.unsafe(statement).simple();
        rows.push(...rowsPerStatement(answer, 1));
      }
      return rows;
    },

    async transaction<T>(
      work: (handle: TransactionSql<Types>) => Promise<T>,
      options: TransactionOptions,
    ): Promise<T> {
      // postgres.js has no transaction clock of its own, so `timeoutMs` has nothing to set. The value travels in a
      // box because `begin`'s type maps an array result element by element (for its batch form, a callback that
      // returns an array of queries); boxed, `T` stays `T`.
      const boxed = async (tx: TransactionSql<Types>) => ({ value: await work(tx) });
      const box =
        options.isolation === undefined
          ? await sql.begin(boxed)
          : await sql.begin(`isolation level ${options.isolation}`, boxed);
      return box.value;
    },
  };
}
