/**
 * @module The caller's MySQL / MariaDB connection, as `outbox.add` takes it: recognised by shape (a `mysql2/promise`
 * or `mariadb` connection; no driver is imported), its statements run with fixed result options, and each answer's
 * in-transaction flag read from the server's OK packet.
 */
import { InvalidOptionsError } from '../../../core/errors.js';
import type { SqlValue } from '../../../stores/mysql/driver.js';

/** A `mysql2/promise` or `mariadb` connection (a pool's or a single one), by the methods oncely uses. */
export interface MySqlConnectionLike {
  query(...args: never[]): Promise<unknown>;
  beginTransaction(): Promise<unknown>;
}

/** What one statement on the caller's connection answered. */
export interface WriteAnswer {
  readonly affectedRows: number;
  /** The AUTO_INCREMENT id of an INSERT, as digits. */
  readonly insertId: string;
  /**
   * Whether what the connection writes next commits only with a COMMIT of the caller's: the server's status flags
   * after the statement say a transaction is open (SERVER_STATUS_IN_TRANS), or that autocommit is off (no
   * SERVER_STATUS_AUTOCOMMIT: every statement is part of a transaction, even one that has not touched a table yet).
   */
  readonly inTransaction: boolean;
}

export interface UserConnection {
  /** The driver (or the ORM the statements go through), for messages. */
  readonly driver: string;
  /**
   * Runs one statement. `needsId`: it is an INSERT whose id the writer reads (a connection whose answers carry no id,
   * Prisma's, then asks the server for it).
   */
  run(sql: string, values: readonly SqlValue[], needsId?: boolean): Promise<WriteAnswer>;
}

// SERVER_STATUS_IN_TRANS and SERVER_STATUS_AUTOCOMMIT in the OK packet's status flags, in both servers' protocol.
const IN_TRANS = 0x0001;
const AUTOCOMMIT = 0x0002;
const inTransaction = (status: number): boolean => (status & IN_TRANS) !== 0 || (status & AUTOCOMMIT) === 0;
// Big integers exactly (insert ids), whatever the caller's connection was configured with.
const MYSQL2_OPTIONS = { supportBigNumbers: true, bigNumberStrings: true };
const MARIADB_OPTIONS = { insertIdAsNumber: false, bigIntAsNumber: false };

type Shape = Record<string, unknown>;
const isFunction = (value: unknown): boolean => typeof value === 'function';

/**
 * The caller's connection when `value` is a MySQL one; undefined when it is anything else (a `pg` client, an ORM
 * transaction). A pool or a callback connection is refused: a pool's statements each commit on their own.
 */
export function userConnectionOf(value: unknown, operation: string): UserConnection | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const shape = value as Shape;
  if (!isFunction(shape.query)) return undefined;
  if (isFunction(shape.getConnection)) {
    throw new InvalidOptionsError(
      `outbox.${operation}: this is a MySQL pool, whose statements each commit on their own; pass the connection of your open transaction`,
    );
  }
  if (!isFunction(shape.beginTransaction)) return undefined;
  if (isFunction(shape.promise)) {
    throw new InvalidOptionsError(
      `outbox.${operation}: this is a mysql2 callback connection; pass connection.promise(), or use mysql2/promise`,
    );
  }
  if (isFunction(shape.batch) && shape.info !== null && typeof shape.info === 'object') {
    return mariadbConnection(shape);
  }
  return mysql2Connection(shape);
}

function mysql2Connection(connection: Shape): UserConnection {
  const query = connection.query as (options: object) => Promise<[unknown, unknown]>;
  return {
    driver: 'mysql2',
    async run(sql, values) {
      const [result] = await query.call(connection, { sql, values: values.map(toBuffer), ...MYSQL2_OPTIONS });
      const header = result as { affectedRows?: unknown; insertId?: unknown; serverStatus?: unknown };
      return {
        affectedRows: Number(header.affectedRows ?? 0),
        insertId: String(header.insertId ?? 0),
        inTransaction: inTransaction(Number(header.serverStatus ?? AUTOCOMMIT)),
      };
    },
  };
}

function mariadbConnection(connection: Shape): UserConnection {
  const query = connection.query as (options: object, values: unknown[]) => Promise<unknown>;
  return {
    driver: 'mariadb',
    async run(sql, values) {
      const result = (await query.call(connection, { sql, ...MARIADB_OPTIONS }, values.map(toBuffer))) as {
        affectedRows?: unknown;
        insertId?: unknown;
      };
      // The connector keeps the status flags of the latest reply: the one just read, this statement's.
      const status = Number((connection.info as { status?: unknown }).status ?? AUTOCOMMIT);
      return {
        affectedRows: Number(result.affectedRows ?? 0),
        insertId: String(result.insertId ?? 0),
        inTransaction: inTransaction(status),
      };
    },
  };
}

// Both drivers send a Buffer as a binary literal; a plain Uint8Array would be escaped as a list of numbers.
function toBuffer(value: SqlValue): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : value;
}
