/**
 * @module The Drizzle fixture of the ORM suite on `drizzle-orm/postgres-js` (porsager's `postgres`). Its name,
 * `drizzle/postgres-js`, is also where the suite's child processes find it (`../${name}/fixture.ts`).
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import type { DrizzleTransactionOf } from '../../../../src/orm/drizzle/index.js';
import { freshSchema, postgresJsOn } from '../../postgres-js/fixture.js';
import type { OrmFixture } from '../../support/fixture.js';
import { drizzleWorld, tablesIn } from '../world.js';

/** A Drizzle db on a postgres.js `sql` of at most `poolSize` connections, with the suite's tables in `schema`. */
export function postgresJsDrizzleOn(schema: string, poolSize = 10) {
  const client = postgresJsOn(poolSize);
  return { db: drizzle({ client, schema: tablesIn(schema) }), client };
}

type Db = ReturnType<typeof postgresJsDrizzleOn>['db'];
export type PostgresJsDrizzleTransaction = DrizzleTransactionOf<Db>;

const world = (schema: string, poolSize: number, owner: boolean) => {
  const { db, client } = postgresJsDrizzleOn(schema, poolSize);
  return Promise.resolve(drizzleWorld(db, schema, owner, () => client.end()));
};

export const fixture: OrmFixture<PostgresJsDrizzleTransaction> = {
  name: 'drizzle/postgres-js',
  async open(label) {
    return world(await freshSchema('drizzle_pgjs', label), 10, true);
  },
  attach: (schema, poolSize = 4) => world(schema, poolSize, false),
};
