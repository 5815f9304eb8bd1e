/**
 * The tables of one MySQL suite run: unique names in database `test`, the payments table made here (oncely's is
 * made by the store's own migrate, through the ORM under test), counted and dropped on a plain mysql2 pool.
 */
import { createPool, dropTable, query, uniqueTable } from '../../mysql/support.js';
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
  const label = orm.replace(/\W/g, '_');
  const table = uniqueTable(label);
  const payments = `${table}_payments`;
  await query(pool, `CREATE TABLE \`${payments}\` (id VARCHAR(64) PRIMARY KEY, cents INT NOT NULL)`);
  return {
    table,
    payments,
    async count(id) {
      const rows = await query(pool, `SELECT COUNT(*) AS n FROM \`${payments}\` WHERE id = ?`, [id]);
      return Number(rows[0]?.n);
    },
    query: (sql, values) => query(pool, sql, values),
    async drop() {
      try {
        await query(pool, `DROP TABLE IF EXISTS \`${payments}\``);
        await dropTable(pool, table);
      } finally {
        await pool.end();
      }
    },
  };
}
