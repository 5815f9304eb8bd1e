import { type EntityManager, EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import { MikroOrmStore } from '../../../src/orm/mikro-orm/index.js';
import { services } from '../../support/services.js';
import type { OrmFixture, OrmWorld } from '../support/fixture.js';
import { committedPayments, freshSchema as freshOrmSchema } from '../support/schema.js';

export interface Payment {
  id: string;
  cents: number;
}

export const PaymentEntity = new EntitySchema<Payment>({
  name: 'Payment',
  tableName: 'orm_payments',
  properties: { id: { type: 'string', primary: true }, cents: { type: 'integer' } },
});

/** MikroORM on `schema`, with a pool of at most `poolSize` connections. */
export function mikroOrmOn(schema: string, poolSize = 10, options: { disableTransactions?: boolean } = {}) {
  return MikroORM.init({
    clientUrl: services.postgres.url,
    schema,
    entities: [PaymentEntity],
    pool: { min: 0, max: poolSize },
    // As MikroORM recommends: the global em refuses entity work, so each request forks (or runs in a transaction).
    allowGlobalContext: false,
    ...options,
  });
}

/** A fresh schema for this ORM's tests (test/orm/support/schema.ts). */
export const freshSchema = (label: string): Promise<string> => freshOrmSchema('mikro_orm', label);

async function world(schema: string, poolSize: number, owner: boolean): Promise<OrmWorld<EntityManager>> {
  const orm = await mikroOrmOn(schema, poolSize);
  const committed = committedPayments(schema);
  const store = new MikroOrmStore({ orm, schema });
  return {
    store,
    schema,
    db: orm.em,
    async insertPayment(em, id, cents) {
      // Written now (the suite looks for the row's lock mid-handler), inside the transaction the em is in.
      await em.persist(em.create(PaymentEntity, { id, cents })).flush();
    },
    userTransaction: (work) => orm.em.transactional(work),
    async rawCommit(em) {
      await em.execute('COMMIT');
    },
    count: committed.count,
    async close() {
      await orm.close();
      await committed.end(owner);
    },
  };
}

export const fixture: OrmFixture<EntityManager> = {
  name: 'mikro-orm',
  async open(label) {
    return world(await freshSchema(label), 10, true);
  },
  attach: (schema, poolSize = 4) => world(schema, poolSize, false),
};
