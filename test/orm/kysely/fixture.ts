import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { KyselyStore } from '../../../src/orm/kysely/index.js';
import { services } from '../../support/services.js';
import type { OrmFixture, OrmWorld } from '../support/fixture.js';
import { committedPayments, freshSchema as freshOrmSchema } from '../support/schema.js';

export interface Database {
  orm_payments: { id: string; cents: number };
}

/** A Kysely instance on `schema`, over a `pg` pool of at most `poolSize` connections (yours to watch). */
export function kyselyOn(schema: string, poolSize = 10): { db: Kysely<Database>; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: services.postgres.url, max: poolSize });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }).withSchema(schema);
  return { db, pool };
}

/** A fresh schema for this ORM's tests (test/orm/support/schema.ts). */
export const freshSchema = (label: string): Promise<string> => freshOrmSchema('kysely', label);

async function world(
  schema: string,
  poolSize: number,
  owner: boolean,
): Promise<OrmWorld<Transaction<Database>>> {
  const { db } = kyselyOn(schema, poolSize);
  const committed = committedPayments(schema);
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
    count: committed.count,
    async close() {
      await db.destroy();
      await committed.end(owner);
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
