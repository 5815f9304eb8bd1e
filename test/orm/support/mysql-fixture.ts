/**
 * What each ORM's MySQL fixture gives the shared MySQL suite (mysql-suite.ts): the ORM connected to MariaDB (through
 * the suite's proxy, so a COMMIT can be cut), its store built as the ORM's docs page shows, and the few business
 * operations the suite needs, written with the ORM's own API, so the suite proves what a user of that ORM gets.
 */
import type { OrmStore } from '../../../src/orm/orm-store.js';

/** The tables of one suite run, in a database of its own: oncely's (migrated by the store) and the payments. */
export interface MySqlTables {
  /** The run's database, which the URL a fixture is given names. */
  readonly database: string;
  /** oncely's table, made by `store.migrate()` through the ORM. */
  readonly table: string;
  /** `payments (id VARCHAR(64) PRIMARY KEY, cents INT NOT NULL)`, made by the suite. */
  readonly payments: string;
}

export interface MySqlOrmWorld<Handle> {
  /** The store under test, on the fixture's ORM object, on `tables.table`. */
  readonly store: OrmStore<Handle>;
  /** The ORM's database object itself: never inside a transaction. */
  readonly db: object;
  /** Inserts one payment through the ORM's transaction handle (the ORM's own query API). */
  insertPayment(handle: Handle, id: string, cents: number): Promise<void>;
  /** Runs `work` in a transaction the caller opened with the ORM's own API (for join mode); the ORM commits. */
  userTransaction<T>(work: (handle: Handle) => Promise<T>): Promise<T>;
  /** Sends `COMMIT` through the ORM's raw query on the handle (an escape). */
  rawCommit(handle: Handle): Promise<void>;
  /** The server's id of the handle's connection (`SELECT CONNECTION_ID()` through the ORM's raw query). */
  connectionId(handle: Handle): Promise<number>;
  /** Closes the ORM (its pool). */
  close(): Promise<void>;
}

export interface MySqlOrmFixture<Handle> {
  readonly name: string;
  /**
   * The ORM on `url` (a MariaDB URL of the run's database), with at most `poolSize` connections where the ORM lets
   * it be bounded.
   */
  open(tables: MySqlTables, url: string, poolSize?: number): Promise<MySqlOrmWorld<Handle>>;
}

/** Host, port, user and database of a `mysql://` URL, as the ORMs' options take them. */
export function connectionOptions(url: string) {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 3306),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: parsed.pathname.slice(1),
  };
}
