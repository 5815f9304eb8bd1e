/**
 * @module The Drizzle fixture of the ORM suite on `drizzle-orm/node-postgres` (a pg Pool); its twin on
 * `drizzle-orm/postgres-js` is postgres-js/fixture.ts.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { DrizzleTransactionOf } from '../../../src/orm/drizzle/index.js';
import { services } from '../../support/services.js';
import type { OrmFixture } from '../support/fixture.js';
import { freshSchema } from '../support/schema.js';
import { drizzleWorld, type Tables, tablesIn } from './world.js';

/** A Drizzle db on a pg Pool of at most `poolSize` connections, with the suite's tables in `schema`. */
export function nodePgDrizzleOn(schema: string, poolSize = 10) {
  const pool = new pg.Pool({ connectionString: services.postgres.url, max: poolSize });
  return { db: drizzle({ client: pool, schema: tablesIn(schema) }), pool };
}

type Db = ReturnType<typeof nodePgDrizzleOn>['db'];
export type NodePgDrizzleTransaction = DrizzleTransactionOf<Db>;

const world = (schema: string, poolSize: number, owner: boolean) => {
  const { db, pool } = nodePgDrizzleOn(schema, poolSize);
  return Promise.resolve(drizzleWorld(db, schema, owner, () => pool.end()));
};

export const fixture: OrmFixture<NodePgDrizzleTransaction> = {
  name: 'drizzle',
  async open(label) {
    return world(await freshSchema('drizzle', label), 10, true);
  },
  attach: (schema, poolSize = 4) => world(schema, poolSize, false),
};

export type { Tables };
