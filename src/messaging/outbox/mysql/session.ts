/**
 * @module How the MySQL outbox runs its statements on the caller's pool: one statement on its own (autocommit,
 * run again after a lost lock race), or a few in one short transaction on a connection checked out for it.
 */
import { type Answer, type Connection, type Driver, driverOf } from '../../../stores/mysql/driver.js';
import { isRetryable } from '../../../stores/mysql/errors.js';
import { bind, type Param } from './bind.js';

// A statement that keeps losing lock races (deadlock victim, lock wait timeout) this many times in a row is an
// outage, reported as the driver's error.
const RACE_ATTEMPTS = 4;

export type Params = Readonly<Record<string, Param>>;

/** Runs `statement` with `params` on a pool or a connection. */
export function runOn(on: Driver | Connection, statement: string, params: Params = {}): Promise<Answer> {
  const { sql, values } = bind(statement, params);
  return on.run(sql, values);
}

export class MySqlSession {
  readonly driver: Driver;

  constructor(pool: unknown, what: string) {
    this.driver = driverOf(pool, what);
  }

  /** One statement in autocommit: its own transaction, so a deadlock or lock wait timeout lets it run again. */
  run(statement: string, params: Params = {}): Promise<Answer> {
    return this.#again(() => runOn(this.driver, statement, params));
  }

  /**
   * `work` inside START TRANSACTION … COMMIT on a connection of its own; ROLLBACK when it throws. A deadlock (the
   * server rolled the transaction back) runs the whole transaction again. A connection whose rollback fails is
   * closed, not handed back: the server rolls back for it.
   */
  transaction<T>(work: (connection: Connection) => Promise<T>): Promise<T> {
    return this.#again(async () => {
      const connection = await this.driver.connect();
      let broken = false;
      try {
        await connection.run('START TRANSACTION', []);
        const result = await work(connection);
        await connection.run('COMMIT', []);
        return result;
      } catch (error) {
        await connection.run('ROLLBACK', []).catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        if (broken) connection.destroy();
        else connection.release();
      }
    });
  }

  async #again<T>(attempt: () => Promise<T>): Promise<T> {
    for (let round = 1; ; round++) {
      try {
        return await attempt();
      } catch (error) {
        if (!isRetryable(error) || round >= RACE_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * round * 5));
      }
    }
  }
}
