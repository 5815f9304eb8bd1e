/**
 * @module MikroORM's transaction objects for oncely: the forked `EntityManager` that `em.transactional(…)` hands its
 * callback (its transaction context is a Knex transaction on one connection). oncely's statements go through
 * `em.execute(text)`, MikroORM's own raw query, which runs on the em's transaction context and is logged as
 * MikroORM's queries are. Several statements go in one simple-query message: `pg` answers with one result per
 * statement and MikroORM's PostgreSQL connection maps each to its rows, so all of them cost one round trip. Before
 * them, the em's unit of work is flushed (see `run`).
 */
import type { EntityManager } from '@mikro-orm/knex';
import type { HandleKind, RawRow } from '../driver.js';

// Methods only MikroORM's EntityManager has together (TypeORM's has no isInTransaction, Kysely's and Drizzle's
// transactions no fork or getTransactionContext).
const METHODS = [
  'isInTransaction',
  'getTransactionContext',
  'transactional',
  'fork',
  'persist',
  'flush',
  'execute',
];

/** MikroORM's `EntityManager`s (of @mikro-orm/postgresql), as oncely runs its statements on them. */
export const mikroOrmTransactions: HandleKind<EntityManager> = {
  name: 'mikro-orm',
  is(value: unknown): value is EntityManager {
    if (value === null || typeof value !== 'object') return false;
    const em = value as Record<string, unknown>;
    return METHODS.every((method) => typeof em[method] === 'function');
  },
  inTransaction(em: EntityManager): boolean {
    // A fork keeps its transaction context after `transactional` ended: the Knex transaction says it completed.
    if (!em.isInTransaction()) return false;
    const context = em.getTransactionContext<{ isCompleted?: () => boolean }>();
    return context?.isCompleted?.() !== true;
  },
  async run(em: EntityManager, statements: readonly string[]): Promise<RawRow[][]> {
    // What the em holds unflushed is written first, as MikroORM flushes before a query that could read it: oncely's
    // statements mark where the handler's writes end (the outcome after them, a savepoint's rollback undoing them).
    // Without this, in a joined transaction the writes of a handler that failed would wait in the caller's unit of
    // work past the savepoint's rollback, and commit with the caller's flush while the key stayed free.
    if (mikroOrmTransactions.inTransaction(em)) await em.flush();
    if (statements.length === 0) return [];
    // `em.execute` runs on the em's transaction context (none: the pool, autocommit).
    return rowsOf(statements, await em.execute<RawRow[] | RawRow[][]>(joined(statements), [], 'all'));
  },
  stateOf(error: unknown): string | undefined {
    // MikroORM converts pg's error into its own exception (UniqueConstraintViolationException, …) and copies pg's
    // fields onto it, `code` with them; a `cause` chain is followed in case a layer wraps it again.
    for (let at: unknown = error, depth = 0; at !== null && typeof at === 'object' && depth < 4; depth++) {
      const { code } = at as { code?: unknown };
      if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
      at = (at as { cause?: unknown }).cause;
    }
    return undefined;
  },
};

/** The statements as one text, each on lines of its own (a trailing `--` comment cannot swallow the separator). */
export function joined(statements: readonly string[]): string {
  return statements.join('\n;\n');
}

/**
 * Each statement's rows from what `execute(text, [], 'all')` answered: one statement's rows as they are, several
 * statements' as an array of row arrays (MikroORM maps pg's results one by one).
 */
export function rowsOf(statements: readonly string[], answer: RawRow[] | RawRow[][]): RawRow[][] {
  if (statements.length === 1) return [answer as RawRow[]];
  const results = answer as RawRow[][];
  if (!Array.isArray(results) || results.length !== statements.length || !results.every(Array.isArray)) {
    const got = Array.isArray(results) ? results.length : 'no';
    throw new Error(
      `mikro-orm: ${statements.length} statements came back as ${got} results (an empty statement?)`,
    );
  }
  return results;
}
