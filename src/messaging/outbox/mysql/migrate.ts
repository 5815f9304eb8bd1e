/**
 * @module The MySQL outbox's DDL: `oncely_outbox` and `oncely_outbox_keys` created when missing (and the database named
 * by `schema`), under the lock every oncely migration takes, and the same DDL as a script to print.
 */
import { MySqlSession } from './session.js';
import { mysqlMigrationStatements } from './statements.js';
import { mysqlOutboxTables } from './table.js';

// The MySQL store's migration lock (src/stores/mysql/migrate.ts): processes starting at once take turns instead of
// racing on CREATE, whichever of oncely's tables they create.
const MIGRATION_LOCK = 'oncely.migrate';
const LOCK_WAIT_S = 60;

function ddl(schema: string | undefined): string[] {
  const tables = mysqlOutboxTables(schema);
  const database = tables.schema === undefined ? [] : [`CREATE DATABASE IF NOT EXISTS \`${tables.schema}\``];
  return [...database, ...mysqlMigrationStatements(tables)];
}

/** Creates the outbox's tables when missing. Idempotent; never drops anything. */
export async function migrateMySql(pool: unknown, schema: string | undefined): Promise<void> {
  const statements = ddl(schema);
  const { driver } = new MySqlSession(pool, 'migrate');
  const connection = await driver.connect();
  let broken = false;
  try {
    const [locked] = (await connection.run('SELECT GET_LOCK(?, ?) AS locked', [MIGRATION_LOCK, LOCK_WAIT_S]))
      .rows;
    if (Number(locked?.locked) !== 1)
      throw new Error(`another migration held ${MIGRATION_LOCK} for ${LOCK_WAIT_S} s`);
    try {
      for (const statement of statements) await connection.run(statement, []);
    } finally {
      await connection.run('SELECT RELEASE_LOCK(?)', [MIGRATION_LOCK]);
    }
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    // A session that may still hold the lock is closed, not handed on.
    if (broken) connection.destroy();
    else connection.release();
  }
}

/**
 * The DDL `migrate` runs on MySQL, as a script for review or for a migration tool of your own (`oncely migrate
 * --store mysql --print`): plain statements ending in `;`, no DELIMITER needed.
 */
export function mysqlOutboxDdl(schema?: string): string {
  return `${ddl(schema)
    .map((statement) => `${statement};`)
    .join('\n\n')}\n`;
}
