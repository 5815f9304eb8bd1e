/**
 * @module What a MySqlStore and its transactional view share: the driver, the statements of its table, the clock,
 * and the one way statements are run (bounded retries of lost lock races, failures as `OncelyError`s). Not public
 * API.
 */
import type { Answer, Driver, Executor, SqlValue } from './driver.js';
import { isRetryable, storeError } from './errors.js';
import { type Statement, type Statements, statementsFor, valuesOf } from './sql.js';

// A statement that keeps losing lock races (deadlock victim, lock wait timeout) this many times in a row is
// reported: a race between duplicates resolves in a round or two, a lock held for good is an outage.
const RACE_ATTEMPTS = 4;

export class MySqlRuntime {
  readonly driver: Driver;
  readonly table: string;
  readonly statements: Statements;
  readonly clock: (() => number) | undefined;

  constructor(driver: Driver, table: string, clock: (() => number) | undefined) {
    this.driver = driver;
    this.table = table;
    this.statements = statementsFor(table);
    this.clock = clock;
  }

  /** The time to pass as the statements' `now ms` parameter; null lets the server's clock decide. */
  now(): number | null {
    return this.clock === undefined ? null : this.clock();
  }

  /** Runs a named-parameter statement of the table. */
  run(operation: string, statement: Statement, values: Readonly<Record<string, SqlValue>>, on?: Executor) {
    return this.raw(operation, statement.sql, valuesOf(statement, values), on);
  }

  /**
   * Runs one statement; failures become `OncelyError`s. On the pool (autocommit: each statement its own
   * transaction), a deadlock or lock wait timeout runs it again: under REPEATABLE READ, gap locks make such races
   * between duplicates ordinary. Inside a caller's transaction the server may have rolled everything back, so
   * there the error goes up as it is.
   */
  async raw(
    operation: string,
    sql: string,
    values: readonly SqlValue[],
    on: Executor = this.driver,
  ): Promise<Answer> {
    const alone = on === this.driver;
    for (let attempt = 1; ; attempt++) {
      try {
        return await on.run(sql, values);
      } catch (error) {
        if (alone && isRetryable(error) && attempt < RACE_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * attempt * 5));
          continue;
        }
        throw storeError(operation, error, this.table);
      }
    }
  }
}
