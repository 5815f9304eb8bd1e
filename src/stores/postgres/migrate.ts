/**
 * @module The PostgreSQL store's schema: `schemaFor` renders the DDL for review or a migration tool of one's own,
 * `migrate` applies it under an advisory lock so several processes starting at once take turns.
 */
import type { Client, Pool, PoolClient } from 'pg';
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions } from '../../core/validate.js';
import { storeError } from './errors.js';
import { identifier } from './options.js';
import schemaSql from './schema.sql.generated.js';
import { quoteIdentifier, tableTarget } from './sql.js';

export interface MigrateOptions {
  /** Default `public`. */
  readonly schema?: string;
  /** Default `oncely_keys`. */
  readonly table?: string;
}

// One lock id for every oncely migration: two processes starting at once take turns instead of racing on
// CREATE TABLE IF NOT EXISTS (which can fail with a unique violation in pg_type when they truly overlap).
const MIGRATION_LOCK = 'oncely.migrate';

/** The DDL `migrate` runs, for review or for a migration tool of your own. */
export function schemaFor(options: MigrateOptions = {}): string {
  knownOptions('migrate', options, ['schema', 'table']);
  const schema = identifier('schema', options.schema, 'public');
  const table = identifier('table', options.table, 'oncely_keys');
  const target = tableTarget(schema, table);
  return schemaSql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .replaceAll('{{schema}}', quoteIdentifier(schema))
    .replaceAll('{{table}}', target.qualified)
    .replaceAll('{{table_literal}}', target.literal)
    .replaceAll('{{expires_index}}', quoteIdentifier(`${table}_expires_at_idx`));
}

/**
 * Creates the store's schema, table and index when missing. Idempotent and safe to run from several processes
 * at once (they serialize on an advisory lock); `oncely migrate` and `PostgresStore#migrate` call it.
 *
 * @example
 * import pg from 'pg';
 * import { migrate } from 'oncely/postgres';
 * await migrate(new pg.Pool({ connectionString: process.env.DATABASE_URL }), { schema: 'app' });
 */
export async function migrate(db: Pool | Client, options: MigrateOptions = {}): Promise<void> {
  if (db === null || typeof db !== 'object' || typeof db.query !== 'function') {
    throw new InvalidOptionsError('migrate: pass a pg Pool or Client');
  }
  const ddl = schemaFor(options);
  const pooled = 'totalCount' in db;
  let client: Client | PoolClient;
  try {
    client = pooled ? await (db as Pool).connect() : (db as Client);
  } catch (error) {
    throw storeError('migrate', error);
  }
  let failed = false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [MIGRATION_LOCK]);
    await client.query(ddl);
    await client.query('COMMIT');
  } catch (error) {
    failed = true;
    await client.query('ROLLBACK').catch(() => {});
    throw storeError('migrate', error);
  } finally {
    if (pooled) (client as PoolClient).release(failed);
  }
}
