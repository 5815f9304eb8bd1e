/**
 * @module The MySQL store's statements run through an ORM instead of a mysql2 / mariadb pool. The store sends each
 * statement with `?` parameters (runtime.ts); this source writes the values into the text as literals
 * (`inlineValues`), sends it through the ORM's raw query, hands back rows the store's readers understand, and turns
 * the ORM's failures back into the server's error (number, SQLSTATE, message) wherever the ORM wrapped it, so the
 * store's retries, hints and escape checks work as on a pool of its own.
 */
import { CorruptRecordError, StoreUnavailableError } from '../core/errors.js';
import {
  type Answer,
  type Connection,
  type Driver,
  poolFor,
  type Row,
  type SqlValue,
} from '../stores/mysql/driver.js';
import { callAnswerColumns, inlineValues } from '../stores/mysql/sql.js';
import type { MySqlAnswer, MySqlSqlDriver } from './driver.js';

/** A MySQL server error as the store reads one (mysql2's and mariadb's shape), found inside an ORM's failure. */
export class MySqlServerError extends Error {
  readonly errno: number;
  readonly sqlState: string;
  readonly sqlMessage: string;
  constructor(errno: number, sqlState: string, sqlMessage: string, cause: unknown) {
    super(sqlMessage, { cause });
    this.name = 'MySqlServerError';
    this.errno = errno;
    this.sqlState = sqlState;
    this.sqlMessage = sqlMessage;
  }
}

/**
 * The server's error inside `error`, down its chain as ORMs wrap it: the driver's error itself (Kysely, Knex,
 * Drizzle's `cause`), TypeORM's `driverError`, MikroORM's exception (it copies `errno` and `sqlState`), Prisma's
 * driver adapter error (`meta.driverAdapterError.cause`: `{ kind: 'mysql', code, state, message }`).
 */
export function serverErrorIn(error: unknown): MySqlServerError | undefined {
  for (let at: unknown = error, depth = 0; at !== null && typeof at === 'object' && depth < 6; depth++) {
    const found = at as Record<string, unknown>;
    if (typeof found.errno === 'number' && typeof found.sqlState === 'string' && found.sqlState !== '') {
      const message = typeof found.sqlMessage === 'string' ? found.sqlMessage : String(found.message);
      return new MySqlServerError(found.errno, found.sqlState, message, error);
    }
    if (found.kind === 'mysql' && typeof found.code === 'number' && typeof found.state === 'string') {
      return new MySqlServerError(found.code, found.state, String(found.message ?? ''), error);
    }
    const meta = found.meta as { driverAdapterError?: unknown } | undefined;
    at = found.driverError ?? meta?.driverAdapterError ?? found.cause;
  }
  return undefined;
}

/** The ORM's failure with the server's error on top where there is one (the ORM's own error as its cause). */
export function mysqlFailure(error: unknown): unknown {
  return serverErrorIn(error) ?? error;
}

// Prisma hands bytes over as a plain Uint8Array; the store's row readers take Buffers (as both drivers give).
function rowOf(raw: Readonly<Record<string, unknown>>): Row {
  const row: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(raw)) {
    row[column] =
      value instanceof Uint8Array && !Buffer.isBuffer(value)
        ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
        : value;
  }
  return row;
}

/** Runs one of the store's statements through `query`, its values inlined; rows and failures normalized. */
export async function runThrough(
  query: (statement: string) => Promise<MySqlAnswer>,
  sql: string,
  values: readonly SqlValue[],
): Promise<Answer> {
  const text = inlineValues(sql, values);
  let answer: MySqlAnswer;
  try {
    answer = await query(text);
  } catch (error) {
    throw mysqlFailure(error);
  }
  if (answer.values === undefined) {
    const { affectedRows, insertId } = answer;
    const rows = answer.rows.map(rowOf);
    return insertId === undefined ? { rows, affectedRows } : { rows, affectedRows, insertId };
  }
  const columns = callAnswerColumns(sql);
  if (columns === undefined || columns.length !== answer.values.length) {
    throw new CorruptRecordError(
      `a CALL answered ${answer.values.length} unnamed values, which oncely cannot name for this statement`,
    );
  }
  const row = Object.fromEntries(columns.map((column, index) => [column, answer.values?.[index]]));
  return { rows: [rowOf(row)], affectedRows: 0 };
}

/**
 * The store's driver over an ORM on MySQL: statements in autocommit on the ORM's pool. It takes no connection of its
 * own (`connect`): the ORM store opens its transactions through the ORM, and migrates through one (mysql-store.ts).
 */
export function ormMySqlDriver<Handle>(orm: MySqlSqlDriver<Handle>): Driver {
  const driver: Driver = {
    kind: 'orm',
    // The stand-in that leads back here, for the store's own `driverOf`.
    get pool() {
      return poolFor(driver);
    },
    configured: {},
    run: (sql, values) => runThrough((text) => orm.query(text), sql, values),
    connect(): Promise<Connection> {
      return Promise.reject(
        new StoreUnavailableError(`${orm.kind.name}: through an ORM, oncely opens no connection of its own`),
      );
    },
  };
  return driver;
}
