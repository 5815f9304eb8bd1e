/**
 * @module The Drizzle world of the ORM suite, on either driver underneath: the payments table declared with
 * `pgSchema(schema).table(…)` (the suite's schema is made per run), the store built as docs/orm/drizzle.md shows,
 * and the suite's operations written with Drizzle's API (`tx.insert`, `db.transaction`, `` tx.execute(sql`COMMIT`) ``).
 */
import { sql } from 'drizzle-orm';
import { integer, type PgDatabase, type PgQueryResultHKT, pgSchema, text } from 'drizzle-orm/pg-core';
import { DrizzleStore, type DrizzleTransactionOf } from '../../../src/orm/drizzle/index.js';
import type { OrmWorld } from '../support/fixture.js';
import { committedPayments } from '../support/schema.js';

/** The suite's payments table in `schema`, as a Drizzle schema (`{ payments }`) for `drizzle({ schema })`. */
export function tablesIn(schema: string) {
  return {
    payments: pgSchema(schema).table('orm_payments', {
      id: text('id').primaryKey(),
      cents: integer('cents').notNull(),
    }),
  };
}

export type Tables = ReturnType<typeof tablesIn>;

/** A Drizzle db with the suite's tables, on any driver. */
export type DrizzleDb = PgDatabase<PgQueryResultHKT, Tables>;

/** The world on `db`; `end` closes the db's client (the pool or the postgres.js `sql`). */
export function drizzleWorld<DB extends DrizzleDb>(
  db: DB,
  schema: string,
  owner: boolean,
  end: () => Promise<void>,
): OrmWorld<DrizzleTransactionOf<DB>> {
  const { payments } = tablesIn(schema);
  const committed = committedPayments(schema);
  const store = new DrizzleStore({ db, schema });
  return {
    store,
    schema,
    db,
    async insertPayment(tx, id, cents) {
      await tx.insert(payments).values({ id, cents });
    },
    userTransaction: (work) => db.transaction(work),
    async rawCommit(tx) {
      await tx.execute(sql`COMMIT`);
    },
    count: committed.count,
    async close() {
      await end();
      await committed.end(owner);
    },
  };
}
