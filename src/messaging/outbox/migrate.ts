import type { PoolClient } from 'pg';
import schemaSql from './schema.sql.generated.js';
import { outboxTable, type Queryable, type SchemaOptions } from './table.js';

/** A `pg` `Pool` (a connection is checked out for the migration) or a connected `Client`/`PoolClient`. */
export type MigrationTarget = Queryable & { connect?: () => Promise<PoolClient> };

// One fixed advisory lock for every outbox migration, so two processes migrating at once (an app starting
// while `oncely migrate` runs) take turns instead of racing on CREATE ... IF NOT EXISTS.
const MIGRATION_LOCK = 7_466_283_551_001;

/**
 * Creates the schema (if missing), the `oncely_outbox` table and its indexes, in one transaction. Safe to run
 * on every start and from several processes at once; it never drops or rewrites anything.
 *
 * @example
 * import { migrate } from 'oncely/outbox';
 * await migrate(pool);                       // public.oncely_outbox
 * await migrate(pool, { schema: 'billing' }); // billing.oncely_outbox
 */
export async function migrate(db: MigrationTarget, options: SchemaOptions = {}): Promise<void> {
  const { schema } = outboxTable(options.schema);
  const pooled = typeof db.connect === 'function' ? await db.connect() : undefined;
  const client: Queryable = pooled ?? db;
  try {
    await client.query('BEGIN');
    try {
      await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(`SET LOCAL search_path TO "${schema}"`);
      await client.query(schemaSql);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  } finally {
    pooled?.release();
  }
}
