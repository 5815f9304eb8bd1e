/**
 * The MySQL outbox's tests: each file gets a database of its own on the machine's MariaDB (the outbox's `schema`
 * option), migrated, on pools of either driver; and transactions on a connection checked out of such a pool.
 */
import { randomBytes } from 'node:crypto';
import type { PoolConnection as MariaDbConnection } from 'mariadb';
import type { PoolConnection as MySql2Connection } from 'mysql2/promise';
import { migrate } from '../../../src/messaging/outbox/index.js';
import type { MySqlPool } from '../../../src/stores/mysql/index.js';
import { createPool, type DriverName, type Isolation, query } from '../../mysql/support.js';
import { requireService } from '../../support/services.js';

export { DRIVERS, type DriverName, ISOLATIONS, type Isolation, query } from '../../mysql/support.js';

export type MySqlConnection = MySql2Connection | MariaDbConnection;

export interface TestOutbox {
  readonly pool: MySqlPool;
  readonly driver: DriverName;
  /** The database holding the outbox: the `schema` option of every outbox function. */
  readonly schema: string;
  /** `schema`.oncely_outbox, quoted. */
  readonly table: string;
  readonly keys: string;
  /** Drops the database, then ends the pool. */
  drop(): Promise<void>;
}

/** A database of its own for one test file, migrated, on a pool of `driver`. */
export async function createTestOutbox(
  label: string,
  driver: DriverName,
  options: { isolation?: Isolation; size?: number; lockWaitS?: number } = {},
): Promise<TestOutbox> {
  await requireService('mariadb');
  const pool = createPool(driver, options);
  const schema = `oncely_ob_${label}_${randomBytes(4).toString('hex')}`;
  await migrate(pool, { schema });
  return {
    pool,
    driver,
    schema,
    table: `\`${schema}\`.oncely_outbox`,
    keys: `\`${schema}\`.oncely_outbox_keys`,
    drop: async () => {
      await query(pool, `DROP DATABASE IF EXISTS \`${schema}\``).catch(() => {});
      await pool.end();
    },
  };
}

/** A connection of its own, checked out of `pool`. */
export const connectionOf = (pool: MySqlPool): Promise<MySqlConnection> =>
  pool.getConnection() as Promise<MySqlConnection>;

/** Runs one statement on a connection of either driver. */
export async function run(
  connection: MySqlConnection,
  sql: string,
  values: unknown[] = [],
): Promise<unknown> {
  if ('batch' in connection) return connection.query(sql, values);
  const [result] = await connection.query(sql, values);
  return result;
}

/** Runs `work` inside START TRANSACTION … COMMIT on a connection of its own (ROLLBACK when it throws). */
export async function inTransaction<T>(
  pool: MySqlPool,
  work: (connection: MySqlConnection) => Promise<T>,
): Promise<T> {
  const connection = await connectionOf(pool);
  try {
    await run(connection, 'START TRANSACTION');
    const result = await work(connection);
    await run(connection, 'COMMIT');
    return result;
  } catch (error) {
    await run(connection, 'ROLLBACK').catch(() => {});
    throw error;
  } finally {
    connection.release();
  }
}

/** Resolves once `check` holds; rejects after `timeoutMs`. */
export const until = async (check: () => Promise<boolean> | boolean, timeoutMs = 15_000, stepMs = 20) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
};

/** A row count of `table` (optionally `where`). */
export async function countOf(pool: MySqlPool, table: string, where = '1 = 1'): Promise<number> {
  const [row] = await query(pool, `SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`);
  return Number(row?.n ?? 0);
}
