import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaStore, type PrismaTransaction } from '../../../src/orm/prisma/index.js';
import { services } from '../../support/services.js';
import type { OrmFixture, OrmWorld } from '../support/fixture.js';
import { committedPayments, freshSchema as freshOrmSchema } from '../support/schema.js';
import { PrismaClient } from './generated/client.js';

export type PrismaTx = PrismaTransaction<PrismaClient>;

/** A PrismaClient on `schema` with a pool of at most `poolSize` connections. */
export function prismaOn(schema: string, poolSize = 10): PrismaClient {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: services.postgres.url, max: poolSize }, { schema }),
  });
}

/** A fresh schema for this ORM's tests (test/orm/support/schema.ts). */
export const freshSchema = (label: string): Promise<string> => freshOrmSchema('prisma', label);

async function world(schema: string, poolSize: number, owner: boolean): Promise<OrmWorld<PrismaTx>> {
  const prisma = prismaOn(schema, poolSize);
  const committed = committedPayments(schema);
  const store = new PrismaStore({ prisma, schema });
  return {
    store,
    schema,
    db: prisma,
    async insertPayment(tx, id, cents) {
      await tx.payment.create({ data: { id, cents } });
    },
    userTransaction: (work) => prisma.$transaction(work),
    async rawCommit(tx) {
      await tx.$executeRawUnsafe('COMMIT');
    },
    count: committed.count,
    async close() {
      await prisma.$disconnect();
      await committed.end(owner);
    },
  };
}

export const fixture: OrmFixture<PrismaTx> = {
  name: 'prisma',
  async open(label) {
    return world(await freshSchema(label), 10, true);
  },
  attach: (schema, poolSize = 4) => world(schema, poolSize, false),
};
