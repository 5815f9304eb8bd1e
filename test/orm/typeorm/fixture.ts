import { DataSource, type EntityManager, EntitySchema } from 'typeorm';
import { TypeOrmStore } from '../../../src/orm/typeorm/index.js';
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
  columns: { id: { type: 'text', primary: true }, cents: { type: 'integer' } },
});

/** An initialized data source on `schema`, with a pool of at most `poolSize` connections. */
export async function dataSourceOn(schema: string, poolSize = 10): Promise<DataSource> {
  const dataSource = new DataSource({
    type: 'postgres',
    url: services.postgres.url,
    schema,
    entities: [PaymentEntity],
    poolSize,
  });
  return dataSource.initialize();
}

/** A fresh schema for this ORM's tests (test/orm/support/schema.ts). */
export const freshSchema = (label: string): Promise<string> => freshOrmSchema('typeorm', label);

async function world(schema: string, poolSize: number, owner: boolean): Promise<OrmWorld<EntityManager>> {
  const dataSource = await dataSourceOn(schema, poolSize);
  const committed = committedPayments(schema);
  const store = new TypeOrmStore({ dataSource, schema });
  return {
    store,
    schema,
    db: dataSource,
    async insertPayment(manager, id, cents) {
      await manager.insert(PaymentEntity, { id, cents });
    },
    userTransaction: (work) => dataSource.transaction(work),
    async rawCommit(manager) {
      await manager.query('COMMIT');
    },
    count: committed.count,
    async close() {
      await dataSource.destroy();
      await committed.end(owner);
    },
  };
}

export const fixture: OrmFixture<EntityManager> = {
  name: 'typeorm',
  async open(label) {
    return world(await freshSchema(label), 10, true);
  },
  attach: (schema, poolSize = 4) => world(schema, poolSize, false),
};
