/**
 * @module The Kysely fixture of the ORM suite: Kysely 0.28 on `PostgresDialect` (a `pg` pool), pointed at a schema of
 * its own with `withSchema`, the store built as docs/orm/kysely.md shows, and the suite's operations written with
 * Kysely's API (`trx.insertInto`, `db.transaction().execute`, `` sql`COMMIT` ``).
 */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { migrate as migrateOutbox } from '../../../src/messaging/outbox/index.js';
import { KyselyStore } from '../../../src/orm/kysely/index.js';
import { migrate } from '../../../src/stores/postgres/index.js';
import { services } from '../../support/services.js';
import type { OrmFixture, OrmWorld } from '../support/fixture.js';

export interface Database {
  orm_payments: { id: string; cents: number };
}

/** A Kysely instance on `schema`, over a `pg` pool of at most `poolSize` connections (yours to watch). */
export function kyselyOn(schema: string, poolSize = 10): { db: Kysely<Database>; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: services.postgres.url, max: poolSize });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }).withSchema(schema);
  return { db, pool };
}

/** A fresh schema, migrated (oncely_keys, oncely_outbox) with the payments table. */
export async function freshSchema(label: string): Promise<string> {
  const schema = `oncely_test_kysely_${label}_${randomBytes(4).toString('hex')}`.toLowerCase();
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

async function world(
  schema: string,
  poolSize: number,
  owner: boolean,
): Promise<OrmWorld<Transaction<Database>>> {
  const { db } = kyselyOn(schema, poolSize);
  const pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
  const store = new KyselyStore({ db, schema });
  return {
    store,
    schema,
    db,
    async insertPayment(trx, id, cents) {
      await trx.insertInto('orm_payments').values({ id, cents }).execute();
    },
    userTransaction: (work) => db.transaction().execute(work),
    async rawCommit(trx) {
      await sql`COMMIT`.execute(trx);
    },
    async count(id) {
      const { rows } = await pool.query(`SELECT count(*) FROM "${schema}".orm_payments WHERE id = $1`, [id]);
      return Number(rows[0].count);
    },
    async close() {
      await db.destroy();
      if (owner) await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

export const fixture: OrmFixture<Transaction<Database>> = {
  name: 'kysely',
  async open(label) {
    return world(await freshSchema(label), 10, true);
  },
  attach: (schema, poolSize = 4) => world(schema, poolSize, false),
};
