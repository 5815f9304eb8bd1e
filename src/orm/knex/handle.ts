/**
 * @module Knex's transaction objects for oncely: the `trx` that `knex.transaction(…)` hands its callback, and how
 * oncely's statements reach its connection: all of them in one `trx.raw(…)`, which on the `pg` client is one
 * simple-query message (one round trip) answered with one result per statement.
 *
 * The text reaches `pg` through the query's `options({ text })`, not as `raw`'s SQL: Knex rewrites every `?` of a
 * raw query's SQL into a `$n` placeholder (with no bindings given too), which would change the values oncely writes
 * into the text as literals (`'a?b'` would be stored as `'a$1b'`), and its `\?` escape cannot keep a backslash
 * that stands before a `?`. Knex passes a query's options to `pg` as its query config, over the SQL it rendered, so
 * `pg` gets oncely's text as it is. Everything else stays Knex's: its check that the transaction is still open, its
 * `query` / `query-error` events and its debug output.
 *
 * What Knex shows as the query's SQL (in those events, its debug output, and the message of every failure, which
 * Knex prefixes with it) is a short label instead of the text: the text holds the key's record as literals (the
 * stored response's body and headers among them), which belong in neither logs nor error messages.
 */
import type { Knex } from 'knex';
import { sqlStateOf } from '../../stores/postgres/errors.js';
import type { HandleKind, RawRow } from '../driver.js';

/** A `pg` result, as Knex's raw query on the `pg` client resolves (several statements: an array of them). */
interface PgResult {
  readonly rows?: RawRow[];
}

/** Knex's transactions (and instances: `isTransaction` tells them apart), as oncely runs its statements on them. */
export const knexTransactions: HandleKind<Knex.Transaction> = {
  name: 'knex',
  /** A Knex instance or transaction: a function (`knex('table')`) with `raw`, `transaction` and a `client`. */
  is(value: unknown): value is Knex.Transaction {
    if (typeof value !== 'function') return false;
    const knex = value as unknown as Partial<Record<'raw' | 'transaction' | 'client', unknown>>;
    return (
      typeof knex.raw === 'function' &&
      typeof knex.transaction === 'function' &&
      typeof knex.client === 'object' &&
      knex.client !== null
    );
  },
  /** A transaction whose callback is still running: Knex marks it completed at its COMMIT or ROLLBACK. */
  inTransaction(trx: Knex.Transaction): boolean {
    return trx.isTransaction === true && typeof trx.isCompleted === 'function' && !trx.isCompleted();
  },
  run(trx: Knex.Transaction, statements: readonly string[]): Promise<RawRow[][]> {
    return runBatch(trx, statements);
  },
  /** Knex throws `pg`'s own error (it only prefixes the message with the SQL): its `code`, from the server. */
  stateOf: sqlStateOf,
};

/** The statements in one message on the object's connection (a transaction's own); each statement's rows. */
export async function runBatch(knex: Knex, statements: readonly string[]): Promise<RawRow[][]> {
  if (statements.length === 0) return [];
  // Each statement on lines of its own, so a statement's trailing `--` comment cannot swallow the separator.
  const text = statements.join('\n;\n');
  const label = `oncely (${statements.length} ${statements.length === 1 ? 'statement' : 'statements'})`;
  const answer: PgResult | PgResult[] = await knex.raw(label).options({ text });
  // pg answers one statement with its result and several with an array of them.
  const results: readonly PgResult[] = Array.isArray(answer) ? answer : [answer];
  if (results.length !== statements.length) {
    const got = results.length;
    throw new Error(
      `knex: ${statements.length} statements came back as ${got} results (one statement per entry)`,
    );
  }
  return results.map((result) => result.rows ?? []);
}
