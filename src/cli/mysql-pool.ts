/**
 * @module A MySQL pool for a CLI command: MYSQL_URL (localhost by default), through whichever driver is installed
 * (mysql2 first, then mariadb), checked with one query before it is used, and where the MySQL store's table is.
 */
import type { MySqlPool } from '../stores/mysql/index.js';
import { mysqlUrl } from './connection-url.js';
import { CommandFailed, UsageError } from './errors.js';

export interface OpenedMySqlPool {
  readonly pool: MySqlPool;
  /** MYSQL_URL with any password masked. */
  readonly url: string;
}

async function createPool(url: URL): Promise<MySqlPool> {
  const config = {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.slice(1)),
    connectionLimit: 4,
    // A firewall that drops packets would otherwise leave the command waiting forever.
    connectTimeout: 10_000,
  };
  try {
    const mysql = (await import('mysql2/promise')).default;
    return mysql.createPool(config);
  } catch {
    // Not installed: the mariadb connector, if that one is.
  }
  try {
    const mariadb = await import('mariadb');
    return mariadb.createPool({ ...config, acquireTimeout: 10_000 });
  } catch {
    throw new UsageError('this command needs a MySQL driver: npm install mysql2 (or mariadb)');
  }
}

export async function openMySqlPool(): Promise<OpenedMySqlPool> {
  const { url, shown } = mysqlUrl();
  const parsed = new URL(url);
  if (parsed.pathname.length <= 1) {
    throw new UsageError(
      `MYSQL_URL names no database: "${shown}"; give one, e.g. mysql://root@127.0.0.1:3306/app`,
    );
  }
  const pool = await createPool(parsed);
  try {
    await rowsOf(pool, 'SELECT 1', []);
  } catch (error) {
    await pool.end().catch(() => {});
    throw new CommandFailed(
      `cannot connect to MySQL at ${shown} (${(error as Error).message}); check MYSQL_URL or start the server`,
    );
  }
  return { pool, url: shown };
}

/**
 * Fails with the migrate hint when the table is missing: commands that read or maintain records never create
 * anything, and DDL belongs to `oncely migrate --store mysql`.
 */
export async function requireMySqlTable(
  pool: MySqlPool,
  table: string,
  where: string,
  flags: readonly string[],
) {
  const sql =
    'SELECT COUNT(*) AS present FROM information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = ?';
  const rows = await rowsOf(pool, sql, [table]);
  if (Number(rows[0]?.present) > 0) return;
  throw new CommandFailed(
    `there is no table ${table} in ${where}; run: ${['oncely migrate --store mysql', ...flags].join(' ')}`,
  );
}

/**
 * A query's rows on either driver, through the pool's own `query` (the store's driver seam is its own): mysql2's
 * promise pool answers `[rows, fields]`, mariadb's the rows themselves.
 */
async function rowsOf(pool: MySqlPool, sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  const query = (pool as unknown as { query(sql: string, params: unknown[]): Promise<unknown> }).query;
  const result = await query.call(pool, sql, params);
  if (Array.isArray(result) && Array.isArray(result[0])) return result[0] as Record<string, unknown>[];
  return result as Record<string, unknown>[];
}
