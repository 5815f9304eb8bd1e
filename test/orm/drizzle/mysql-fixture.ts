/**
 * Drizzle on MariaDB for the shared MySQL suite: `drizzle-orm/mysql2` on a mysql2 pool, the store as
 * docs/orm/drizzle.md shows it.
 */
import { sql } from 'drizzle-orm';
import { int, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import mysql from 'mysql2/promise';
import { DrizzleStore } from '../../../src/orm/drizzle/index.js';
import { connectionOptions, type MySqlOrmFixture } from '../support/mysql-fixture.js';

const paymentsOf = (name: string) =>
  mysqlTable(name, { id: varchar('id', { length: 64 }).primaryKey(), cents: int('cents').notNull() });

/** The db as `drizzle({ client: pool })` makes it on a mysql2/promise pool. */
const dbOn = (pool: mysql.Pool) => drizzle({ client: pool });
type Db = ReturnType<typeof dbOn>;
type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export const mysqlFixture: MySqlOrmFixture<Tx> = {
  name: 'drizzle',
  async open(tables, url, poolSize = 10) {
    const pool = mysql.createPool({ ...connectionOptions(url), connectionLimit: poolSize });
    const db = dbOn(pool);
    const payments = paymentsOf(tables.payments);
    const store = new DrizzleStore({ db, table: tables.table });
    return {
      store,
      db,
      async insertPayment(tx, id, cents) {
        await tx.insert(payments).values({ id, cents });
      },
      userTransaction: (work) => db.transaction(work),
      async rawCommit(tx) {
        await tx.execute(sql`COMMIT`);
      },
      async connectionId(tx) {
        const [rows] = (await tx.execute(sql`SELECT CONNECTION_ID() AS id`)) as unknown as [{ id: number }[]];
        return Number(rows[0]?.id);
      },
      close: () => pool.end(),
    };
  },
};
