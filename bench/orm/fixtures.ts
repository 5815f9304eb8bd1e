/**
 * @module The ORM benchmark's database side: one schema of its own (oncely's table and the payments table every
 * path writes to, dropped at the end), the connection name every path's connections carry, so their server
 * processes can be found and their CPU read, and the versions for the environment line.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import pg from 'pg';
import { migrate } from '../../src/stores/postgres/index.js';
import { cpuOfProcesses, DATABASE_URL } from '../postgres/fixtures.js';

export { DATABASE_URL };

/**
 * The `application_name` of every connection a measured path opens (each ORM is given it in its own config), so the
 * server processes serving the paths are told from everything else on the server (other work, the monitor).
 */
export const APPLICATION_NAME = 'oncely-bench-orm';

/** The bench schema's name is this and six hex digits. */
export const SCHEMA_PREFIX = 'oncely_bench_orm_';

/** `"schema".orm_payments`, the table of the ORM test fixtures (the Prisma test client maps its model to it). */
export const PAYMENTS_TABLE = 'orm_payments';

export interface BenchDatabase {
  readonly schema: string;
  /** Server pids of the measured paths' connections, listed now (they stay: every pool keeps its connections). */
  backends(): Promise<number[]>;
  close(): Promise<void>;
}

/** A fresh schema: oncely's keys table (pg's own migration) and `orm_payments (id text primary key, cents int)`. */
export async function openDatabase(): Promise<BenchDatabase> {
  const schema = `${SCHEMA_PREFIX}${randomBytes(3).toString('hex')}`;
  // The monitor is named differently: its own queries are not the paths' work.
  const monitor = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 1,
    application_name: `${APPLICATION_NAME}-monitor`,
  });
  monitor.on('error', () => {});
  await migrate(monitor, { schema });
  await monitor.query(
    `CREATE TABLE "${schema}".${PAYMENTS_TABLE} (id text PRIMARY KEY, cents integer NOT NULL)`,
  );
  return {
    schema,
    async backends() {
      const { rows } = await monitor.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid',
        [APPLICATION_NAME],
      );
      return rows.map((row) => row.pid);
    },
    async close() {
      await monitor.query(`DROP SCHEMA "${schema}" CASCADE`);
      await monitor.end();
    },
  };
}

/** utime + stime in µs of the given server processes (re-exported: the PostgreSQL benchmark's reading of /proc). */
export { cpuOfProcesses };

const require = createRequire(import.meta.url);

/** The installed version of `name`, read from its package.json. */
export function versionOf(name: string): string {
  // Most of these packages' `exports` hide package.json: it is found from the entry point's folder instead.
  const entry = require.resolve(name);
  const folder = `/node_modules/${name}/`;
  const path = `${entry.slice(0, entry.lastIndexOf(folder) + folder.length)}package.json`;
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}
