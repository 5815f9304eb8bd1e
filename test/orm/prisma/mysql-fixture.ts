/**
 * Prisma 7 on MariaDB for the shared MySQL suite: the client generated from mysql.prisma with
 * `@prisma/adapter-mariadb`, the store as docs/orm/prisma.md shows it. Its model maps to `payments`, so the suite
 * gives each run a database of its own.
 */
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaStore, type PrismaTransaction } from '../../../src/orm/prisma/index.js';
import { connectionOptions, type MySqlOrmFixture } from '../support/mysql-fixture.js';
import { PrismaClient } from './generated/mysql/client.js';

type Tx = PrismaTransaction<PrismaClient>;

export const mysqlFixture: MySqlOrmFixture<Tx> = {
  name: 'prisma',
  async open(tables, url, poolSize = 10) {
    const { host, port, user, password, database } = connectionOptions(url);
    const adapter = new PrismaMariaDb({ host, port, user, password, database, connectionLimit: poolSize });
    const prisma = new PrismaClient({ adapter });
    const store = new PrismaStore({ prisma, table: tables.table });
    return {
      store,
      db: prisma,
      async insertPayment(tx, id, cents) {
        await tx.payment.create({ data: { id, cents } });
      },
      userTransaction: (work) => prisma.$transaction(work),
      async rawCommit(tx) {
        await tx.$executeRawUnsafe('COMMIT');
      },
      async connectionId(tx) {
        const rows = await tx.$queryRawUnsafe<{ id: bigint | number }[]>('SELECT CONNECTION_ID() AS id');
        return Number(rows[0]?.id);
      },
      close: () => prisma.$disconnect(),
    };
  },
};
