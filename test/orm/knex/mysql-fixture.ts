/**
 * Knex on MariaDB for the shared MySQL suite: `client: 'mysql2'`, the store as docs/orm/knex.md shows it.
 */
import createKnex, { type Knex } from 'knex';
import { KnexStore } from '../../../src/orm/knex/index.js';
import { connectionOptions, type MySqlOrmFixture } from '../support/mysql-fixture.js';

export const mysqlFixture: MySqlOrmFixture<Knex.Transaction> = {
  name: 'knex',
  async open(tables, url, poolSize = 10) {
    const knex = createKnex({
      client: 'mysql2',
      connection: connectionOptions(url),
      pool: { min: 0, max: poolSize },
    });
    const store = new KnexStore({ knex, table: tables.table });
    return {
      store,
      db: knex,
      async insertPayment(trx, id, cents) {
        await trx(tables.payments).insert({ id, cents });
      },
      userTransaction: (work) => knex.transaction(work),
      async rawCommit(trx) {
        await trx.raw('COMMIT');
      },
      async connectionId(trx) {
        const [rows] = (await trx.raw('SELECT CONNECTION_ID() AS id')) as [{ id: number }[]];
        return Number(rows[0]?.id);
      },
      close: () => knex.destroy(),
    };
  },
};
