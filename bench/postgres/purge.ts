import { PostgresStore } from '../../src/stores/postgres/index.js';
import type { Bench } from './fixtures.js';
import { runRound, type Scenario } from './scenarios.js';

export interface PurgeNumbers {
  readonly rows: number;
  readonly bytesPerRecord: number;
  readonly sizeFull: number;
  readonly sizeAfterPurge: number;
  readonly sizeAfterVacuum: number;
  readonly sizeAfterRefill: number;
  readonly seconds: number;
  readonly rowsPerSec: number;
  readonly batchSize: number;
  /** The transactional scenario alone on the full table, then while purge runs: p50 / p99 / requests/s. */
  readonly before: Awaited<ReturnType<typeof runRound>>;
  readonly during: Awaited<ReturnType<typeof runRound>>;
}

// Realistic completed records: a 43-character hashed key, a 64-character fingerprint, one header, a 128-byte
// body; expiries spread over the last second.
const FILL = (table: string) => `
  INSERT INTO ${table} (key, state, fingerprint, token, attempt, lease_until_ms, created_at_ms, completed_at_ms,
    expires_at_ms, status, headers, body, encoding, storage)
  SELECT rtrim(translate(encode(sha256(($2 || g)::bytea), 'base64'), '+/', '-_'), '='), 'completed',
    encode(sha256(g::text::bytea), 'hex'), $1::bigint - 60000 + g, 1, $1::bigint - 50000,
    $1::bigint - 60000, $1::bigint - 50000,
    $1::bigint - 1 - (g % 1000), 201, '[["content-type","application/json"]]'::jsonb,
    convert_to(repeat(md5(g::text), 4), 'UTF8'), 'identity', 'inline'
  FROM generate_series(1, $3) AS g`;

const size = async (bench: Bench, table: string) =>
  Number((await bench.pool.query('SELECT pg_total_relation_size($1::regclass) AS n', [table])).rows[0].n);

/**
 * Fills the store's table with `rows` expired records, measures the transactional scenario on it, then purges
 * in batches while the same scenario keeps running (a purge must not stall requests), and reports the table's
 * size after the purge, after a plain VACUUM, and after refilling as many rows (freed space is reused).
 */
export async function measurePurge(
  bench: Bench,
  scenario: Scenario,
  rows: number,
  concurrency: number,
  serverCpu: () => number,
): Promise<PurgeNumbers> {
  const table = `"${bench.schema}".oncely_keys`;
  const batchSize = 5_000;
  await bench.pool.query(`TRUNCATE ${table}`);
  const nowMs = () => Date.now();
  await bench.pool.query(FILL(table), [nowMs(), 'a', rows]);
  await bench.pool.query(`VACUUM ANALYZE ${table}`);
  const sizeFull = await size(bench, table);
  const before = await runRound(scenario, concurrency, 2_000, 'purge-before', serverCpu);
  const store = new PostgresStore({ pool: bench.pool, schema: bench.schema, listen: false });
  const started = performance.now();
  const purging = store.purgeExpired({ batchSize }).then((n) => ({ n, at: performance.now() }));
  // Requests run alongside the purge for as long as it takes.
  const during = await runRound(scenario, concurrency, 0, 'purge-during', serverCpu, purging);
  const { n: purged, at: finished } = await purging;
  const seconds = (finished - started) / 1_000;
  const sizeAfterPurge = await size(bench, table);
  await bench.pool.query(`VACUUM ${table}`);
  const sizeAfterVacuum = await size(bench, table);
  await bench.pool.query(FILL(table), [nowMs(), 'b', rows]);
  const sizeAfterRefill = await size(bench, table);
  return {
    rows: purged,
    bytesPerRecord: sizeFull / rows,
    sizeFull,
    sizeAfterPurge,
    sizeAfterVacuum,
    sizeAfterRefill,
    seconds,
    rowsPerSec: purged / seconds,
    batchSize,
    before,
    during,
  };
}
