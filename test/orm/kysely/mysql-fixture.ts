/**
 * Kysely on MariaDB for the shared MySQL suite: `MysqlDialect` on a mysql2 pool, the store as docs/orm/kysely.md
 * shows it.
 */
import { Kysely, MysqlDialect, sql, type Transaction } from 'kysely';
import { createPool } from 'mysql2';
import { KyselyStore } from '../../../src/orm/kysely/index.js';
import { connectionOptions, type MySqlOrmFixture } from '../support/mysql-fixture.js';

export interface MySqlDatabase {
  payments: { id: string; cents: number };
}

export const mysqlFixture: MySqlOrmFixture<Transaction<MySqlDatabase>> = {
  name: 'kysely',
  async open(tables, url, poolSize = 10) {
    const pool = createPool({ ...connectionOptions(url), connectionLimit: poolSize });
    const db = new Kysely<MySqlDatabase>({ dialect: new MysqlDialect({ pool }) });
    const store = new KyselyStore({ db, table: tables.table });
    return {
      store,
      db,
      async insertPayment(trx, id, cents) {
        await trx
          .insertInto(tables.payments as 'payments')
          .values({ id, cents })
          .execute();
      },
      userTransaction: (work) => db.transaction().execute(work),
      async rawCommit(trx) {
        await sql`COMMIT`.execute(trx);
      },
      async connectionId(trx) {
        const { rows } = await sql<{ id: number }>`SELECT CONNECTION_ID() AS id`.execute(trx);
        return Number(rows[0]?.id);
      },
      close: () => db.destroy(),
    };
  },
};
