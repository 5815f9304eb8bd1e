/**
 * @module The Knex fixture of the ORM suite: Knex 3 on the `pg` client, pointed at a schema of its own with its
 * `searchPath` option, the store built as docs/orm/knex.md shows, and the suite's operations written with Knex's API
 * (`trx('orm_payments').insert`, `knex.transaction`, `trx.raw('COMMIT')`).
 */
import { randomBytes } from 'node:crypto';
import createKnex, { type Knex } from 'knex';
import pg from 'pg';
import { migrate as migrateOutbox } from '../../../src/messaging/outbox/index.js';
import { KnexStore } from '../../../src/orm/knex/index.js';
import { migrate } from '../../../src/stores/postgres/index.js';
import { services } from '../../support/services.js';
import type { OrmFixture, OrmWorld } from '../support/fixture.js';

/** A Knex instance (the `pg` client) on `schema`, with a pool of at most `poolSize` connections. */
export function knexOn(schema: string, poolSize = 10, pool: Knex.PoolConfig = {}): Knex {
  return createKnex({
    client: 'pg',
    connection: services.postgres.url,
    searchPath: [schema],
    pool: { min: 0, max: poolSize, ...pool },
  });
}

/** A fresh schema, migrated (oncely_keys, oncely_outbox) with the payments table. */
export async function freshSchema(label: string): Promise<string> {
  const schema = `oncely_test_knex_${label}_${randomBytes(4).toString('hex')}`.toLowerCase();
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

async function world(schema: string, poolSize: number, owner: boolean): Promise<OrmWorld<Knex.Transaction>> {
  const knex = knexOn(schema, poolSize);
  const pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
  const store = new KnexStore({ knex, schema });
  return {
    store,
    schema,
    db: knex,
    async insertPayment(trx, id, cents) {
      await trx('orm_payments').insert({ id, cents });
    },
    userTransaction: (work) => knex.transaction(work),
    async rawCommit(trx) {
      await trx.raw('COMMIT');
    },
    async count(id) {
      const { rows } = await pool.query(`SELECT count(*) FROM "${schema}".orm_payments WHERE id = $1`, [id]);
      return Number(rows[0].count);
    },
    async close() {
      await knex.destroy();
      if (owner) await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

export const fixture: OrmFixture<Knex.Transaction> = {
  name: 'knex',
  async open(label) {
    return world(await freshSchema(label), 10, true);
  },
  attach: (schema, poolSize = 4) => world(schema, poolSize, false),
};
