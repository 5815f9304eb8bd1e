/**
 * @module TypeORM's transaction objects for oncely: the `EntityManager` that `dataSource.transaction(…)` hands its
 * callback (its query runner holds the transaction's connection), and how oncely's statements reach that
 * connection. TypeORM's `manager.query(text)` keeps only a single statement's rows (given several statements, the
 * `pg` driver answers with one result per statement and TypeORM returns `undefined`), so the statements go to the
 * query runner's own `pg` connection instead, in one simple-query message: one round trip for all of them, on the
 * same connection and so in the same transaction. They are logged through the data source's logger as TypeORM's
 * own queries are; TypeORM's `beforeQuery`/`afterQuery` subscribers do not see them.
 */
import type { DataSource, EntityManager, Logger, QueryRunner } from 'typeorm';
import type { HandleKind, RawRow } from '../driver.js';

/** What `queryRunner.connect()` resolves with on TypeORM's postgres driver: a `pg` client (or pg-native's). */
interface PgConnection {
  query(text: string): Promise<PgResult | PgResult[]>;
}

interface PgResult {
  readonly rows?: RawRow[];
}

// TypeORM marks its classes with these symbols (its InstanceChecker): a MongoEntityManager has a symbol of its own.
const ENTITY_MANAGER = Symbol.for('EntityManager');
const DATA_SOURCE = Symbol.for('DataSource');

const markOf = (value: object): unknown => (value as { '@instanceof'?: unknown })['@instanceof'];

/**
 * TypeORM's `EntityManager`s, as oncely runs its statements on them. The `DataSource` itself is recognized too (as
 * the ORM's database object, never inside a transaction), so `outbox.add(dataSource, …)` is refused as outside a
 * transaction instead of being taken for a `pg` client, whose `query` method it also has.
 */
export const typeormTransactions: HandleKind<EntityManager> = {
  name: 'typeorm',
  is(value: unknown): value is EntityManager {
    if (value === null || typeof value !== 'object') return false;
    const mark = markOf(value);
    const { query, transaction } = value as Partial<Record<'query' | 'transaction', unknown>>;
    return (
      (mark === ENTITY_MANAGER || mark === DATA_SOURCE) &&
      typeof query === 'function' &&
      typeof transaction === 'function'
    );
  },
  inTransaction(manager: EntityManager): boolean {
    // A DataSource has no query runner, as a manager outside a transaction (`dataSource.manager`) has none.
    const runner = manager.queryRunner;
    return runner !== undefined && !runner.isReleased && runner.isTransactionActive;
  },
  async run(manager: EntityManager, statements: readonly string[]): Promise<RawRow[][]> {
    const source = markOf(manager) === DATA_SOURCE ? (manager as unknown as DataSource) : manager.dataSource;
    if (manager.queryRunner !== undefined) return runOn(manager.queryRunner, source.logger, statements);
    // Outside any transaction: a connection of its own for these statements, as `manager.query` takes one.
    const runner = source.createQueryRunner();
    try {
      return await runOn(runner, source.logger, statements);
    } finally {
      await runner.release();
    }
  },
  stateOf(error: unknown): string | undefined {
    // pg's error carries `code`; TypeORM's QueryFailedError copies it and keeps pg's error as `driverError`.
    for (let at: unknown = error, depth = 0; at !== null && typeof at === 'object' && depth < 4; depth++) {
      const { code } = at as { code?: unknown };
      if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
      const next = at as { driverError?: unknown; cause?: unknown };
      at = next.driverError ?? next.cause;
    }
    return undefined;
  },
};

/** The statements in one message on the runner's connection; each statement's rows, in order. */
export async function runOn(
  runner: QueryRunner,
  logger: Logger,
  statements: readonly string[],
): Promise<RawRow[][]> {
  // A released runner's connection is back in the pool, perhaps another request's by now: TypeORM's own query
  // refuses it, and so must this (it skips the check `runner.query` makes).
  if (runner.isReleased) {
    throw new Error("typeorm: this EntityManager's query runner is released (its transaction has ended)");
  }
  if (statements.length === 0) return [];
  const connection = (await runner.connect()) as PgConnection;
  // Each statement on lines of its own, so a statement's trailing `--` comment cannot swallow the separator.
  const text = statements.join('\n;\n');
  logger.logQuery(text, undefined, runner);
  let answer: PgResult | PgResult[];
  try {
    answer = await connection.query(text);
  } catch (error) {
    logger.logQueryError(error instanceof Error ? error : String(error), text, undefined, runner);
    throw error;
  }
  // pg answers one statement with its result and several with an array of them.
  const results: readonly PgResult[] = Array.isArray(answer) ? answer : [answer];
  if (results.length !== statements.length) {
    const got = results.length;
    throw new Error(
      `typeorm: ${statements.length} statements came back as ${got} results (an empty statement?)`,
    );
  }
  return results.map((result) => result.rows ?? []);
}
