/**
 * MikroORM 6 on MariaDB for the shared MySQL suite: @mikro-orm/mariadb, the store as docs/orm/mikro-orm.md shows it.
 */
import { type EntityManager, EntitySchema, MikroORM } from '@mikro-orm/mariadb';
import { MikroOrmStore } from '../../../src/orm/mikro-orm/index.js';
import { connectionOptions, type MySqlOrmFixture } from '../support/mysql-fixture.js';

interface Payment {
  id: string;
  cents: number;
}

export const mysqlFixture: MySqlOrmFixture<EntityManager> = {
  name: 'mikro-orm',
  async open(tables, url, poolSize = 10) {
    const payment = new EntitySchema<Payment>({
      name: 'Payment',
      tableName: tables.payments,
      properties: { id: { type: 'string', primary: true }, cents: { type: 'integer' } },
    });
    const { host, port, user, password, database } = connectionOptions(url);
    const orm = await MikroORM.init({
      host,
      port,
      user,
      password,
      dbName: database,
      entities: [payment],
      pool: { min: 0, max: poolSize },
      allowGlobalContext: false,
    });
    const store = new MikroOrmStore({ orm, table: tables.table });
    return {
      store,
      db: orm.em,
      async insertPayment(em, id, cents) {
        await em.persist(em.create(payment, { id, cents })).flush();
      },
      userTransaction: (work) => orm.em.transactional(work),
      async rawCommit(em) {
        await em.execute('COMMIT');
      },
      async connectionId(em) {
        const rows = await em.execute<{ id: number }[]>('SELECT CONNECTION_ID() AS id');
        return Number(rows[0]?.id);
      },
      close: () => orm.close(),
    };
  },
};
