/**
 * @module The MySQL store's DDL: the table and its procedures (begin, claim, delete), created when missing.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions } from '../../core/validate.js';
import { driverOf, type Executor, type MySqlPool } from './driver.js';
import { storeError } from './errors.js';
import { tableName } from './options.js';
import { ddlFor } from './sql.js';

export interface MigrateOptions {
  /** Default `oncely_keys`, in the pool's database. */
  readonly table?: string;
}

// One lock name for every oncely migration: processes starting at once take turns instead of racing on CREATE.
const MIGRATION_LOCK = 'oncely.migrate';
const LOCK_WAIT_S = 60;
// A procedure keeps the sql_mode it was created under, whatever the session that calls it says: strict, so a
// value that does not fit its column fails instead of being cut short.
const ROUTINE_SQL_MODE =
  'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';

/**
 * The DDL `migrate` runs, for review or for a migration tool of your own: the `mysql` client's form, with each
 * procedure between `DELIMITER` lines. Run it with the sql_mode above (`SET SESSION sql_mode = …` first).
 */
export function schemaFor(options: MigrateOptions = {}): string {
  knownOptions('migrate', options, ['table']);
  const [table, ...routines] = ddlFor(tableName(options.table));
  return [
    `SET SESSION sql_mode = '${ROUTINE_SQL_MODE}';`,
    `${table};`,
    'DELIMITER //',
    ...routines.map((routine) => `${routine} //`),
    'DELIMITER ;',
    '',
  ].join('\n\n');
}

/**
 * The migration on one connection (a session of its own: the lock and the sql_mode are the session's): the table and
 * its procedures, created when missing, while holding `GET_LOCK`. Also run through an ORM (src/orm/mysql-store.ts).
 */
export async function migrateOn(connection: Executor, table: string): Promise<void> {
  const [locked] = (await connection.run('SELECT GET_LOCK(?, ?) AS locked', [MIGRATION_LOCK, LOCK_WAIT_S]))
    .rows;
  if (Number(locked?.locked) !== 1)
    throw new Error(`another migration held ${MIGRATION_LOCK} for ${LOCK_WAIT_S} s`);
  try {
    // The session's own sql_mode comes back before the connection returns to the pool.
    await connection.run('SET @oncely_sql_mode = @@SESSION.sql_mode', []);
    await connection.run(`SET SESSION sql_mode = '${ROUTINE_SQL_MODE}'`, []);
    try {
      for (const statement of ddlFor(table)) await connection.run(statement, []);
    } finally {
      await connection.run('SET SESSION sql_mode = @oncely_sql_mode', []);
    }
  } finally {
    await connection.run('SELECT RELEASE_LOCK(?)', [MIGRATION_LOCK]);
  }
}

/**
 * Creates the store's table and procedures when missing. Idempotent and safe to run from several processes at
 * once (they take turns on `GET_LOCK`); `oncely migrate --store mysql` and `MySqlStore#migrate` call it.
 *
 * @example
 * import mysql from 'mysql2/promise';
 * import { migrate } from 'oncely/mysql';
 * await migrate(mysql.createPool({ uri: 'mysql://root@127.0.0.1:3306/test' }));
 */
export async function migrate(pool: MySqlPool, options: MigrateOptions = {}): Promise<void> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('migrate: options must be an object');
  knownOptions('migrate', options, ['table']);
  const table = tableName(options.table);
  const driver = driverOf(pool, 'migrate');
  let connection: Awaited<ReturnType<typeof driver.connect>>;
  try {
    connection = await driver.connect();
  } catch (error) {
    throw storeError('migrate', error, table);
  }
  let broken = false;
  try {
    await migrateOn(connection, table);
  } catch (error) {
    broken = true;
    throw storeError('migrate', error, table);
  } finally {
    // A connection whose session may still hold the lock or the strict sql_mode is closed, not handed on.
    if (broken) connection.destroy();
    else connection.release();
  }
}
