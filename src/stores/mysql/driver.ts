/**
 * @module The driver seam: the one place that knows `mysql2/promise` from `mariadb`. The store runs a statement
 * with positional parameters and gets rows or an affected-rows count back; it checks a connection out for a
 * transaction and gives it back (or destroys it). Drivers are optional peers: only their types are imported, and
 * a pool is recognised by its shape.
 */
import type {
  Connection as MariaDbAnyConnection,
  PoolConnection as MariaDbConnection,
  Pool as MariaDbPool,
} from 'mariadb';
import type {
  Connection as MySql2AnyConnection,
  PoolConnection as MySql2Connection,
  Pool as MySql2Pool,
} from 'mysql2/promise';
import { InvalidOptionsError } from '../../core/errors.js';

/** A pool of `mysql2/promise` (`mysql.createPool(…)`) or of the `mariadb` connector (`mariadb.createPool(…)`). */
export type MySqlPool = MySql2Pool | MariaDbPool;

/**
 * A connection of the caller's, with a transaction open on it, to join (`transactional({ connection })`): one of
 * `mysql2/promise` (checked out of a pool, or made with `createConnection`) or of the `mariadb` connector.
 */
export type MySqlConnection = MySql2AnyConnection | MariaDbAnyConnection;

/** A statement parameter: the store only ever sends these. */
export type SqlValue = string | number | Uint8Array | null;

/** A row as the driver hands it over; rows.ts turns its values into the store's types. */
export type Row = Readonly<Record<string, unknown>>;

/** What one statement answered: the rows of a SELECT (or of a procedure's result set), or the rows it changed. */
export interface Answer {
  readonly rows: readonly Row[];
  readonly affectedRows: number;
  /** The AUTO_INCREMENT id an INSERT generated, as digits (the outbox's ids; the store's tables have none). */
  readonly insertId?: string;
}

/** Anything that runs a statement: the pool, or one connection checked out of it. */
export interface Executor {
  run(sql: string, values: readonly SqlValue[]): Promise<Answer>;
}

/** A connection of its own, for a transaction or a session setting. */
export interface Connection extends Executor {
  /** The server's id of the connection (`CONNECTION_ID()`), for `KILL` and for logs. */
  readonly threadId: number | undefined;
  /** Back to the pool, its session as it is. */
  release(): void;
  /** Closed, not returned: the server rolls back whatever transaction it had open. */
  destroy(): void;
  /** The driver's own connection object, as the caller's code uses it (transactional mode's handle). */
  readonly handle: MySql2Connection | MariaDbConnection;
  /** Calls `listener` once when the connection breaks or closes; the returned function stops listening. */
  onLost(listener: (error?: unknown) => void): () => void;
}

export interface Driver extends Executor {
  /** The pool's driver, or `orm`: statements through an ORM's raw query (oncely/kysely, … on MySQL). */
  readonly kind: 'mysql2' | 'mariadb' | 'orm';
  /** The caller's pool, as given. */
  readonly pool: MySqlPool;
  connect(): Promise<Connection>;
  /** Host, port and database as the pool was configured, where the driver tells them without a call. */
  readonly configured: { readonly host?: unknown; readonly port?: unknown; readonly database?: unknown };
}

// Per-statement options that pin how results come back, whatever the caller's pool was configured with: objects
// keyed by column (never arrays or nested tables), big integers exactly (as strings or BigInt; rows.ts converts).
export const MYSQL2_QUERY = {
  rowsAsArray: false,
  nestTables: false,
  supportBigNumbers: true,
  bigNumberStrings: true,
};
const MARIADB_QUERY = {
  rowsAsArray: false,
  nestTables: false,
  metaAsArray: false,
  bigIntAsNumber: false,
  decimalAsNumber: false,
  insertIdAsNumber: false,
};

const isFunction = (value: unknown): boolean => typeof value === 'function';

// Marks the stand-in `poolFor` makes: a module-local symbol, so nothing outside oncely can make one.
const MADE = Symbol('oncely.mysql.driver');

/**
 * A pool-shaped stand-in for a driver oncely made itself (an ORM's raw queries, src/orm): `driverOf` gives the
 * driver back, so a `MySqlStore` runs its statements through it. Not public API.
 */
export function poolFor(driver: Driver): MySqlPool {
  return { [MADE]: driver } as unknown as MySqlPool;
}

/** The driver behind `pool`, or an `InvalidOptionsError` saying what was expected. */
export function driverOf(pool: unknown, what = 'MySqlStore'): Driver {
  const made = (pool as { [MADE]?: Driver } | null)?.[MADE];
  if (made !== undefined) return made;
  const shape = pool as Record<string, unknown> | null;
  if (
    shape === null ||
    typeof shape !== 'object' ||
    !isFunction(shape.query) ||
    !isFunction(shape.getConnection)
  ) {
    throw new InvalidOptionsError(`${what}: pool must be a mysql2/promise or mariadb pool`);
  }
  if (isFunction(shape.promise)) {
    throw new InvalidOptionsError(
      `${what}: this is a mysql2 callback pool; pass pool.promise(), or create it with mysql2/promise`,
    );
  }
  if (isFunction(shape.batch) && isFunction(shape.totalConnections)) return mariadb(pool as MariaDbPool);
  return mysql2(pool as MySql2Pool);
}

function mysql2(pool: MySql2Pool): Driver {
  const run = async (on: MySql2Pool | MySql2Connection, sql: string, values: readonly SqlValue[]) => {
    const [result] = await on.query({ sql, values: values.map(toBuffer), ...MYSQL2_QUERY });
    return answerOf(result);
  };
  const config = (pool as { pool?: { config?: { connectionConfig?: Record<string, unknown> } } }).pool?.config
    ?.connectionConfig;
  return {
    kind: 'mysql2',
    pool,
    configured: { host: config?.host, port: config?.port, database: config?.database },
    run: (sql, values) => run(pool, sql, values),
    async connect() {
      const connection = await pool.getConnection();
      // The promise wrapper does not pass on the socket's events; the connection under it emits them.
      const events = (connection as unknown as { connection: NodeJS.EventEmitter }).connection;
      return {
        threadId: connection.threadId ?? undefined,
        handle: connection,
        run: (sql, values) => run(connection, sql, values),
        release: () => connection.release(),
        destroy: () => connection.destroy(),
        onLost: (listener) => listen(events, listener),
      };
    },
  };
}

function mariadb(pool: MariaDbPool): Driver {
  const run = async (on: MariaDbPool | MariaDbConnection, sql: string, values: readonly SqlValue[]) =>
    answerOf(await on.query({ sql, ...MARIADB_QUERY }, values.map(toBuffer)));
  return {
    kind: 'mariadb',
    pool,
    configured: {},
    run: (sql, values) => run(pool, sql, values),
    async connect() {
      const connection = await pool.getConnection();
      return {
        threadId: connection.threadId ?? undefined,
        handle: connection,
        run: (sql, values) => run(connection, sql, values),
        release: () => void connection.release().catch(() => {}),
        destroy: () => connection.destroy(),
        onLost: (listener) => listen(connection as unknown as NodeJS.EventEmitter, listener),
      };
    },
  };
}

/** A caller's connection, as joined mode runs statements on it: never released or closed by the store. */
export interface JoinedConnection extends Executor {
  /** The connection as the caller gave it (what the handler writes through). */
  readonly handle: MySqlConnection;
  /** Calls `listener` once when the connection breaks or closes; the returned function stops listening. */
  onLost(listener: (error?: unknown) => void): () => void;
}

/** The caller's connection to join, or an `InvalidOptionsError` saying what was expected. */
export function joinedConnectionOf(connection: unknown): JoinedConnection {
  const shape = connection as Record<string, unknown> | null;
  if (shape === null || typeof shape !== 'object' || !isFunction(shape.query)) {
    throw new InvalidOptionsError('transactional: connection must be a mysql2/promise or mariadb connection');
  }
  if (isFunction(shape.getConnection)) {
    throw new InvalidOptionsError(
      'transactional: connection is a pool; pass the connection you began your transaction on',
    );
  }
  if (isFunction(shape.promise)) {
    throw new InvalidOptionsError(
      'transactional: this is a mysql2 callback connection; pass its .promise() wrapper, or use mysql2/promise',
    );
  }
  if (isFunction(shape.batch)) {
    const mariadbConnection = connection as MariaDbAnyConnection;
    return {
      handle: mariadbConnection,
      run: async (sql, values) =>
        answerOf(await mariadbConnection.query({ sql, ...MARIADB_QUERY }, values.map(toBuffer))),
      onLost: (listener) => listen(mariadbConnection as unknown as NodeJS.EventEmitter, listener),
    };
  }
  const mysql2Connection = connection as MySql2AnyConnection;
  // The promise wrapper does not pass on the socket's events; the connection under it emits them.
  const events = (connection as { connection?: NodeJS.EventEmitter }).connection;
  return {
    handle: mysql2Connection,
    run: async (sql, values) => {
      const [result] = await mysql2Connection.query({ sql, values: values.map(toBuffer), ...MYSQL2_QUERY });
      return answerOf(result);
    },
    onLost: (listener) => (events === undefined ? () => {} : listen(events, listener)),
  };
}

/** `error` and `end` on a connection, as one call of `listener`; the returned function stops listening. */
function listen(events: NodeJS.EventEmitter, listener: (error?: unknown) => void): () => void {
  let called = false;
  const once = (error?: unknown) => {
    if (called) return;
    called = true;
    listener(error);
  };
  events.on('error', once);
  events.on('end', once);
  return () => {
    events.off('error', once);
    events.off('end', once);
  };
}

/**
 * Both drivers answer a SELECT with an array of rows, a write with an OK packet (`affectedRows`), and a CALL with
 * an array of its result sets followed by the OK packet of the CALL itself; the store's procedures return one
 * result set, which is what counts.
 */
export function answerOf(result: unknown): Answer {
  if (Array.isArray(result)) {
    const rows = result.length > 0 && Array.isArray(result[0]) ? result[0] : result;
    return { rows: rows as Row[], affectedRows: 0 };
  }
  const header = result as { affectedRows?: unknown; insertId?: unknown } | null;
  const affectedRows = Number(header?.affectedRows ?? 0);
  const insertId = insertIdOf(header?.insertId);
  return insertId === undefined ? { rows: [], affectedRows } : { rows: [], affectedRows, insertId };
}

/**
 * An OK packet's insert id as digits: a BigInt or a string as it is, a number only while it is exact (a driver
 * configured without big numbers rounds a larger one); 0, or none, is no id.
 */
export function insertIdOf(value: unknown): string | undefined {
  if (typeof value === 'bigint') return value > 0n ? String(value) : undefined;
  if (typeof value === 'string') return /^[1-9]\d*$/.test(value) ? value : undefined;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? String(value) : undefined;
  return undefined;
}

// Both drivers send a Buffer as a binary literal; a plain Uint8Array would be escaped as a list of numbers.
function toBuffer(value: SqlValue): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : value;
}
