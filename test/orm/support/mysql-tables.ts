/**
 * The tables of one MySQL suite run, in a database of its own (so fixed names serve, as an ORM's models expect: the
 * Prisma model maps to `payments`): the payments table made here, oncely's by the store's own migrate, through the
 * ORM under test; counted on a plain mysql2 pool, and dropped with the database.
 */
import { randomBytes } from 'node:crypto';
import { createPool, query } from '../../mysql/support.js';
import type { MySqlTables } from './mysql-fixture.js';

export interface MySqlTablesOwner extends MySqlTables {
  /** Payments with this id that committed, counted on a plain pool (never through the ORM under test). */
  count(id: string): Promise<number>;
  /** Runs a statement on the plain pool. */
  query(sql: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Drops both tables (and oncely's procedures), then ends the pool. */
  drop(): Promise<void>;
}

export async function freshMySqlTables(orm: string): Promise<MySqlTablesOwner> {
  const pool = createPool('mysql2', { size: 3 });
  const database = `oncely_test_${orm.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  const payments = 'payments';
  await query(pool, `CREATE DATABASE \`${database}\``);
  await query(
    pool,
    `CREATE TABLE \`${database}\`.${payments} (id VARCHAR(64) PRIMARY KEY, cents INT NOT NULL)`,
  );
  return {
    database,
    table: 'oncely_keys',
    payments,
    async count(id) {
      const rows = await query(pool, `SELECT COUNT(*) AS n FROM \`${database}\`.${payments} WHERE id = ?`, [
        id,
      ]);
      return Number(rows[0]?.n);
    },
    query: (sql, values) => query(pool, sql, values),
    async drop() {
      try {
        await query(pool, `DROP DATABASE IF EXISTS \`${database}\``);
      } finally {
        await pool.end();
      }
    },
  };
}
