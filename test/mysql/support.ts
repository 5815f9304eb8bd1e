/**
 * Pools and tables for the MySQL store's tests: each file gets a table of its own in database `test` (migrated),
 * on pools of either driver whose connections run at the isolation level the test asks for.
 */
import { randomBytes } from 'node:crypto';
import * as mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import type { MySqlPool } from '../../src/stores/mysql/index.js';
import { migrate } from '../../src/stores/mysql/index.js';
import { routinesOf } from '../../src/stores/mysql/sql.js';
import { services } from '../support/services.js';

export const MYSQL_URL = services.mariadb.url;

export type DriverName = 'mysql2' | 'mariadb';
export type Isolation = 'REPEATABLE READ' | 'READ COMMITTED';

export const DRIVERS: readonly DriverName[] = ['mysql2', 'mariadb'];
export const ISOLATIONS: readonly Isolation[] = ['REPEATABLE READ', 'READ COMMITTED'];

/** A pool of `driver` whose every connection runs its transactions at `isolation`. */
export function createPool(
  driver: DriverName,
  {
    isolation = 'REPEATABLE READ',
    size = 6,
    lockWaitS,
  }: { isolation?: Isolation; size?: number; lockWaitS?: number } = {},
): MySqlPool {
  const url = new URL(MYSQL_URL);
  const config = {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
  };
  const settings = [`SET SESSION TRANSACTION ISOLATION LEVEL ${isolation}`];
  if (lockWaitS !== undefined) settings.push(`SET SESSION innodb_lock_wait_timeout = ${lockWaitS}`);
  if (driver === 'mariadb')
    return mariadb.createPool({ ...config, connectionLimit: size, initSql: settings });
  const pool = mysql.createPool({ ...config, connectionLimit: size });
  // The callback pool's event: its queries are queued on the new connection before anything the store sends.
  pool.pool.on('connection', (connection) => {
    for (const setting of settings) connection.query(setting);
  });
  return pool;
}

/** Runs one statement on a pool of either driver, rows as objects. */
export async function query(
  pool: MySqlPool,
  sql: string,
  values: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  if ('batch' in pool) return (await pool.query(sql, values)) as Record<string, unknown>[];
  const [rows] = await pool.query(sql, values);
  return rows as Record<string, unknown>[];
}

export interface TestTable {
  readonly pool: MySqlPool;
  readonly table: string;
  /** Drops the table and its procedures, then ends the pool. */
  drop(): Promise<void>;
}

export function uniqueTable(label: string): string {
  return `oncely_test_${label}_${randomBytes(4).toString('hex')}`;
}

/** Drops a store table and its procedures. */
export async function dropTable(pool: MySqlPool, table: string): Promise<void> {
  const routines = routinesOf(table);
  await query(pool, `DROP TABLE IF EXISTS \`${table}\``);
  for (const routine of [routines.begin, routines.claim, routines.delete])
    await query(pool, `DROP PROCEDURE IF EXISTS \`${routine}\``);
}

/** A migrated table of its own for one test file, on a pool of `driver`. */
export async function createTestTable(
  label: string,
  driver: DriverName,
  options: { isolation?: Isolation; size?: number; lockWaitS?: number } = {},
): Promise<TestTable> {
  const pool = createPool(driver, options);
  const table = uniqueTable(label);
  await migrate(pool, { table });
  return {
    pool,
    table,
    drop: async () => {
      await dropTable(pool, table);
      await pool.end();
    },
  };
}
