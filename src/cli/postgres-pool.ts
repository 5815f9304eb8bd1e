/**
 * @module The PostgreSQL pool a command uses: `DATABASE_URL`, checked with one query before use.
 */
import type { Pool } from 'pg';
import { databaseUrl } from './connection-url.js';
import { CommandFailed } from './errors.js';
import { requirePeer } from './peer.js';

/** A pool for a CLI command: DATABASE_URL (localhost by default), checked with one query before it is used. */
export async function openPool(options: { max?: number } = {}): Promise<{ pool: Pool; url: string }> {
  const { url, shown } = databaseUrl();
  const pg = await requirePeer<typeof import('pg')>('pg');
  const pool = new pg.default.Pool({
    connectionString: url,
    max: options.max ?? 4,
    // A firewall that drops packets would otherwise leave the command waiting forever.
    connectionTimeoutMillis: 10_000,
  });
  // An idle connection that breaks (a restarted server under `demo --serve`) is reported on the pool; without a
  // listener Node crashes with the driver's stack. The next query reconnects, so one line is enough.
  pool.on('error', (error) => {
    process.stderr.write(`oncely: a PostgreSQL connection to ${shown} broke (${error.message})\n`);
  });
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end();
    throw new CommandFailed(
      `cannot connect to PostgreSQL at ${shown} (${(error as Error).message}); check DATABASE_URL or start PostgreSQL`,
    );
  }
  return { pool, url: shown };
}
