/**
 * The schema every ORM fixture starts from: named for the ORM and the test, migrated as a user's database is
 * (oncely_keys by the store's migration, oncely_outbox by the outbox's), with the suite's payments table.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate as migrateOutbox } from '../../../src/messaging/outbox/index.js';
import { migrate } from '../../../src/stores/postgres/index.js';
import { services } from '../../support/services.js';

/** A fresh schema named for `orm` and `label`, migrated (oncely_keys, oncely_outbox) with the payments table. */
export async function freshSchema(orm: string, label: string): Promise<string> {
  const schema = `oncely_test_${orm}_${label}_${randomBytes(4).toString('hex')}`.toLowerCase();
  const pool = new pg.Pool({ connectionString: services.postgres.url, max: 1 });
  try {
    await migrate(pool, { schema });
    await migrateOutbox(pool, { schema });
    await pool.query(`CREATE TABLE "${schema}".orm_payments (id text PRIMARY KEY, cents integer NOT NULL)`);
  } finally {
    await pool.end();
  }
  return schema;
}

/** The payments that committed, counted on a plain pg pool of its own, and the schema's end. */
export interface CommittedPayments {
  count(id: string): Promise<number>;
  /** Ends the pool, dropping the schema first when `drop` (the world that made it). */
  end(drop: boolean): Promise<void>;
}

/** Counts what committed, on a plain pg pool (never through the ORM under test). */
export function committedPayments(schema: string): CommittedPayments {
  const pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
  return {
    async count(id) {
      const { rows } = await pool.query(`SELECT count(*) FROM "${schema}".orm_payments WHERE id = $1`, [id]);
      return Number(rows[0].count);
    },
    async end(drop) {
      try {
        if (drop) await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      } finally {
        await pool.end();
      }
    },
  };
}
