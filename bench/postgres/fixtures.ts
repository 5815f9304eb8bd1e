import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { migrate } from '../../src/stores/postgres/index.js';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface Bench {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** `"schema".payments`: the business table every scenario inserts into. */
  readonly payments: string;
  /** Backend pids of the pool's connections, for the server CPU they spend. */
  readonly backends: readonly number[];
  close(): Promise<void>;
}

/**
 * A schema of the benchmark's own (dropped at the end) with the oncely table and a payments table, and a pool
 * whose connections are all opened up front and kept, so their server processes can be measured.
 */
export async function startBench(poolSize: number): Promise<Bench> {
  const schema = `oncely_bench_${randomBytes(3).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: poolSize, idleTimeoutMillis: 0 });
  pool.on('error', () => {});
  await migrate(pool, { schema });
  const payments = `"${schema}".payments`;
  await pool.query(
    `CREATE TABLE ${payments} (id bigserial PRIMARY KEY, order_id text NOT NULL, cents integer NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now())`,
  );
  const clients = await Promise.all(Array.from({ length: poolSize }, () => pool.connect()));
  const backends = clients.map((client) => (client as unknown as { processID: number }).processID);
  for (const client of clients) client.release();
  return {
    pool,
    schema,
    payments,
    backends,
    close: async () => {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** utime + stime of the given processes, in µs (from /proc; clock ticks are 100 Hz on Linux). */
export function cpuOfProcesses(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // A backend that ended mid-run contributes nothing more.
    }
  }
  return ticks * 10_000;
}

/** Statements and round trips the pool's clients send, counted by wrapping `query` (one call = one trip). */
export interface Counter {
  roundTrips: number;
  statements: number;
}

export function countingPool(pool: pg.Pool, counter: Counter): pg.Pool {
  const count = (config: unknown) => {
    const text = typeof config === 'string' ? config : (config as { text: string }).text;
    counter.roundTrips += 1;
    // Multi-statement messages (transactional mode's `BEGIN; claim`) are joined with ';\n'.
    counter.statements += text.split(';\n').length;
  };
  const wrapQuery = <T extends { query: (...args: never[]) => unknown }>(target: T): T['query'] =>
    ((...args: Parameters<T['query']>) => {
      count(args[0]);
      return (target.query as (...a: unknown[]) => unknown).apply(target, args);
    }) as T['query'];
  const counting = Object.create(pool) as pg.Pool;
  counting.query = wrapQuery(pool);
  counting.connect = (async () => {
    const client = await pool.connect();
    return Object.assign(Object.create(client), {
      query: wrapQuery(client),
      release: client.release.bind(client),
      on: client.on.bind(client),
      off: client.off.bind(client),
    });
  }) as pg.Pool['connect'];
  return counting;
}

export function versions(): { pg: string; server?: string } {
  const { version } = JSON.parse(
    readFileSync(new URL('../../node_modules/pg/package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return { pg: version };
}
