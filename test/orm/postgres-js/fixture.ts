import postgres, { type Sql, type TransactionSql } from 'postgres';
import { PostgresJsStore } from '../../../src/orm/postgres-js/index.js';
import { services } from '../../support/services.js';
import type { OrmFixture, OrmWorld } from '../support/fixture.js';

/**
 * A postgres.js `sql` on the test database, at most `poolSize` connections. Notices are dropped: postgres.js prints
 * them by default, and the escape tests' ROLLBACK after a COMMIT of the handler's warns that no transaction is open.
 */
export function postgresJsOn(poolSize = 10): Sql {
  return postgres(services.postgres.url, { max: poolSize, onnotice: () => {} });
}

import { committedPayments, freshSchema } from '../support/schema.js';

export { committedPayments, freshSchema };

async function world(schema: string, poolSize: number, owner: boolean): Promise<OrmWorld<TransactionSql>> {
  const sql = postgresJsOn(poolSize);
  const committed = committedPayments(schema);
  const store = new PostgresJsStore({ sql, schema });
  const payments = `${schema}.orm_payments`;
  return {
    store,
    schema,
    db: sql,
    async insertPayment(tx, id, cents) {
      await tx`INSERT INTO ${tx(payments)} ${tx({ id, cents })}`;
    },
    async userTransaction<T>(work: (tx: TransactionSql) => Promise<T>): Promise<T> {
      // Boxed: `begin`'s type unwraps an array result element by element (its batch form).
      const box = await sql.begin(async (tx) => ({ value: await work(tx) }));
      return box.value;
    },
    async rawCommit(tx) {
      await tx.unsafe('COMMIT');
    },
    count: committed.count,
    async close() {
      await sql.end();
      await committed.end(owner);
    },
  };
}

export const fixture: OrmFixture<TransactionSql> = {
  name: 'postgres-js',
  async open(label) {
    return world(await freshSchema('postgres_js', label), 10, true);
  },
  attach: (schema, poolSize = 4) => world(schema, poolSize, false),
};
