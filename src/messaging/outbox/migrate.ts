/**
 * @module `migrate` for the outbox: on PostgreSQL the schema, the `oncely_outbox` table and its indexes created or
 * upgraded in one transaction; on MySQL / MariaDB the outbox and key-lock tables. Safe on every start and from
 * several processes at once.
 */
import type { PoolClient } from 'pg';
import { isMySqlPool, type MySqlPoolLike } from './dialect.js';
import { migrateMySql } from './mysql/migrate.js';
import { migrationScript } from './sql.js';
import { outboxTable, type Queryable, type SchemaOptions } from './table.js';

/**
 * A `pg` `Pool` (a connection is checked out for the migration) or a connected `Client`/`PoolClient`, or a MySQL
 * pool (`mysql2/promise` or `mariadb`).
 */
export type MigrationTarget = (Queryable & { connect?: () => Promise<PoolClient> }) | MySqlPoolLike;

/**
 * Creates the schema (if missing), the `oncely_outbox` table and its indexes, in one transaction. Safe to run
 * on every start and from several processes at once; it never drops data. A table made before `seq` existed is
 * upgraded (see sql/migrate.sql).
 *
 * On MySQL it creates `oncely_outbox` and `oncely_outbox_keys` in the pool's database (or in database `schema`,
 * created if missing), taking turns with other migrations on `GET_LOCK`.
 *
 * @example
 * import { migrate } from 'oncely/outbox';
 * await migrate(pool);                       // public.oncely_outbox (MySQL: the pool's database)
 * await migrate(pool, { schema: 'billing' }); // billing.oncely_outbox
 */
export async function migrate(db: MigrationTarget, options: SchemaOptions = {}): Promise<void> {
  if (isMySqlPool(db)) return migrateMySql(db, options.schema);
  const script = migrationScript(outboxTable(options.schema));
  const pooled = typeof db.connect === 'function' ? await db.connect() : undefined;
  const client: Queryable = pooled ?? db;
  try {
    await client.query('BEGIN');
    try {
      // Several statements in one message (sql/migrate.sql), so no parameters: the script has the schema in it.
      await client.query(script);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  } finally {
    pooled?.release();
  }
}
