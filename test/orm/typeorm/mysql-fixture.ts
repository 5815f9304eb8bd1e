/**
 * TypeORM on MariaDB for the shared MySQL suite: `type: 'mariadb'` on mysql2, the store as docs/orm/typeorm.md
 * shows it.
 */
import { DataSource, type EntityManager, EntitySchema } from 'typeorm';
import { TypeOrmStore } from '../../../src/orm/typeorm/index.js';
import { connectionOptions, type MySqlOrmFixture } from '../support/mysql-fixture.js';

interface Payment {
  id: string;
  cents: number;
}

export const mysqlFixture: MySqlOrmFixture<EntityManager> = {
  name: 'typeorm',
  async open(tables, url, poolSize = 10) {
    const payment = new EntitySchema<Payment>({
      name: 'Payment',
      tableName: tables.payments,
      columns: { id: { type: 'varchar', length: 64, primary: true }, cents: { type: 'int' } },
    });
    const { host, port, user, password, database } = connectionOptions(url);
    const dataSource = await new DataSource({
      type: 'mariadb',
      host,
      port,
      username: user,
      password,
      database,
      entities: [payment],
      poolSize,
    }).initialize();
    const store = new TypeOrmStore({ dataSource, table: tables.table });
    return {
      store,
      db: dataSource,
      async insertPayment(manager, id, cents) {
        await manager.insert(payment, { id, cents });
      },
      userTransaction: (work) => dataSource.transaction(work),
      async rawCommit(manager) {
        await manager.query('COMMIT');
      },
      async connectionId(manager) {
        const rows = (await manager.query('SELECT CONNECTION_ID() AS id')) as { id: number }[];
        return Number(rows[0]?.id);
      },
      close: () => dataSource.destroy(),
    };
  },
};
