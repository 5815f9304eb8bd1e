import createKnex, { type Knex } from 'knex';
import { KnexStore } from '../../../src/orm/knex/index.js';
import { services } from '../../support/services.js';
import type { OrmFixture, OrmWorld } from '../support/fixture.js';
import { committedPayments, freshSchema as freshOrmSchema } from '../support/schema.js';

/** A Knex instance (the `pg` client) on `schema`, with a pool of at most `poolSize` connections. */
export function knexOn(schema: string, poolSize = 10, pool: Knex.PoolConfig = {}): Knex {
  return createKnex({
    client: 'pg',
    connection: services.postgres.url,
    searchPath: [schema],
    pool: { min: 0, max: poolSize, ...pool },
  });
}

/** A fresh schema for this ORM's tests (test/orm/support/schema.ts). */
export const freshSchema = (label: string): Promise<string> => freshOrmSchema('knex', label);

async function world(schema: string, poolSize: number, owner: boolean): Promise<OrmWorld<Knex.Transaction>> {
  const knex = knexOn(schema, poolSize);
  const committed = committedPayments(schema);
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
    count: committed.count,
    async close() {
      await knex.destroy();
      await committed.end(owner);
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
