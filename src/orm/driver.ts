/**
 * @module What oncely needs from an ORM or a driver to run its own SQL inside the caller's transaction: one small
 * driver per ORM (oncely/kysely, oncely/prisma, …). The store's statements stay the store's; a driver only says how
 * a statement reaches the ORM's connection, how a transaction opens through the ORM, and how to recognize the ORM's
 * transaction objects. Drivers import nothing of their ORM at run time (types only), so an ORM stays an optional
 * peer that only its own users install.
 */
import type { IsolationLevel } from '../stores/postgres/transaction-session.js';

export type { IsolationLevel };

/** A result row by column name, as the ORM's raw query returned it (normalized later by `normalizeRow`). */
export type RawRow = Readonly<Record<string, unknown>>;

/**
 * The ORM's transaction objects: how to recognize one, whether it is inside an open transaction, and how to run
 * oncely's statements on it. Static per ORM (no database object needed), so `outbox.add(trx, event)` can take any
 * ORM's transaction as it comes.
 */
export interface HandleKind<Handle> {
  /** The ORM's name, for messages: `kysely`, `prisma`, `drizzle`, … */
  readonly name: string;
  /** Whether `value` is this ORM's object (a transaction or its database object): shape checks, no imports. */
  is(value: unknown): value is Handle;
  /** Whether the handle is inside an open transaction (writes through it commit with the transaction). */
  inTransaction(handle: Handle): boolean;
  /**
   * Runs the statements in order on the handle's connection and resolves with each one's rows. Values are already
   * written into the text as literals (no parameters), so a driver that can send several statements in one message
   * (the simple query protocol) should: that is one round trip instead of several.
   */
  run(handle: Handle, statements: readonly string[]): Promise<RawRow[][]>;
  /** The SQLSTATE a failure of `run` carries (pg's `code`, Prisma's driver adapter error …), if the ORM keeps it. */
  stateOf?(error: unknown): string | undefined;
}

export interface TransactionOptions {
  /**
   * The isolation level to ask for; undefined leaves the database's default (`default_transaction_isolation`), and
   * the ORM sends no `SET TRANSACTION` of its own (TypeORM and Prisma send one as a message of its own).
   */
  readonly isolation: IsolationLevel | undefined;
  /**
   * How long the transaction may stay open: the claim's lease plus a margin. ORMs that end transactions on their own
   * clock (Prisma's interactive `timeout`, …) are given at least this, so the lease, not the ORM, decides.
   */
  readonly timeoutMs: number;
}

/** The database an ORM object speaks to, as far as oncely's statements go. */
export type Dialect = 'postgres' | 'mysql';

/** One database object of an ORM (a Kysely instance, a PrismaClient, a Drizzle db, …), as the store uses it. */
export interface SqlDriver<Handle> {
  /** PostgreSQL (the default, when absent). */
  readonly dialect?: 'postgres';
  readonly kind: HandleKind<Handle>;
  /** Runs statements outside any transaction (each commits on its own), on the ORM's pool. */
  run(statements: readonly string[]): Promise<RawRow[][]>;
  /**
   * Opens a transaction through the ORM and calls `work` with its handle: the ORM COMMITs when `work` resolves (and
   * this resolves with its value) and ROLLBACKs when it rejects (and this rejects with `work`'s error, or with the
   * COMMIT's failure).
   */
  transaction<T>(work: (handle: Handle) => Promise<T>, options: TransactionOptions): Promise<T>;
}

/** What one MySQL statement answered through an ORM: a SELECT's rows (a CALL's first result set), or a write's count. */
export interface MySqlAnswer {
  readonly rows: readonly RawRow[];
  readonly affectedRows: number;
  /** The AUTO_INCREMENT id an INSERT generated, as digits, where the ORM's answer carries it (not Prisma's). */
  readonly insertId?: string;
  /**
   * A CALL's one answer row as bare values, where the ORM lost the column names (Prisma's mariadb adapter): in the
   * procedure's column order, which the store knows (`callAnswerColumns`).
   */
  readonly values?: readonly unknown[];
}

/**
 * An ORM's transaction objects on MySQL / MariaDB: how to recognize one, whether it is inside an open transaction,
 * and how one statement reaches its connection. MySQL drivers send one statement per call (no `multipleStatements`
 * unless a pool asks for it, which oncely never relies on), and oncely reads affected-row counts (MySQL has no
 * `RETURNING`), so this is `query`, not PostgreSQL's `run` of several statements.
 */
export interface MySqlHandleKind<Handle> {
  /** The ORM's name, for messages. */
  readonly name: string;
  /** Whether `value` is this ORM's object on MySQL (a transaction or its database object): shape checks only. */
  is(value: unknown): value is Handle;
  /** Whether the handle is inside an open transaction. */
  inTransaction(handle: Handle): boolean;
  /** Runs ONE statement (values already written in as literals) on the handle's connection. */
  query(handle: Handle, statement: string): Promise<MySqlAnswer>;
}

/** One database object of an ORM on MySQL / MariaDB, as the store uses it. */
export interface MySqlSqlDriver<Handle> {
  readonly dialect: 'mysql';
  readonly kind: MySqlHandleKind<Handle>;
  /** Runs one statement outside any transaction, on the ORM's pool: it commits on its own. */
  query(statement: string): Promise<MySqlAnswer>;
  /** As `SqlDriver.transaction`: the ORM commits when `work` resolves and rolls back when it rejects. */
  transaction<T>(work: (handle: Handle) => Promise<T>, options: TransactionOptions): Promise<T>;
}

/** An ORM database object on either dialect: each ORM's driver function tells which from the object itself. */
export type OrmDriver<Handle> = SqlDriver<Handle> | MySqlSqlDriver<Handle>;
