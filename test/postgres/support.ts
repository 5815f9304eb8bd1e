import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/stores/postgres/index.js';
import { services } from '../support/services.js';

export const DATABASE_URL = services.postgres.url;

export interface TestSchema {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** `"schema".name`, for the test's own business tables. */
  table(name: string): string;
  /** Drops the schema and everything in it, then ends the pool. */
  drop(): Promise<void>;
}

/** A schema of its own for one test file (migrated), so files run in parallel with everyone else's. */
export async function createTestSchema(label: string, poolSize = 10): Promise<TestSchema> {
  const schema = `oncely_test_${label}_${randomBytes(4).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: poolSize });
  pool.on('error', () => {});
  await migrate(pool, { schema });
  return {
    pool,
    schema,
    table: (name) => `"${schema}".${name}`,
    drop: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
