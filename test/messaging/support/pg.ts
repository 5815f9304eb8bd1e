import pg from 'pg';
import { migrate } from '../../../src/messaging/outbox/index.js';
import { services } from '../../support/services.js';

/** A pool of a few connections: the machine's PostgreSQL is shared by every test file running in parallel. */
export function testPool(max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: services.postgres.url, max });
  pool.on('error', () => {});
  return pool;
}

/** A schema of its own per test file (and per run), migrated; `drop()` removes it. */
export async function freshOutbox(pool: pg.Pool, label: string) {
  const schema = `oncely_msg_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await migrate(pool, { schema });
  return {
    schema,
    table: `"${schema}".oncely_outbox`,
    drop: () => pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`),
  };
}

/** Runs `work` in a transaction on a client of its own. */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

export const until = async (check: () => Promise<boolean> | boolean, timeoutMs = 15_000, stepMs = 20) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
};
