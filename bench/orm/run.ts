/**
 * @module The ORM benchmark: what oncely's transactional mode costs per new request on each ORM, beside the ORM's own
 * transaction and beside raw pg, all in one run: round trips (counted on the client), requests/s, latency, client
 * CPU and server CPU (the serving backends' utime + stime from /proc) per request, in rounds whose order alternates
 * (ABBA) so slow drift of the machine falls on every path alike. Writes the `orm` section of docs/benchmarks.md.
 * Run it alone:
 *   flock /tmp/oncely-bench.lock node --import tsx bench/orm/run.ts [--quick] [--orms=kysely,prisma]
 * (`--orms` measures a subset beside raw pg and pg mode, and never writes the section.)
 */

import { runRound, type Scenario } from '../postgres/scenarios.js';
import { writeSection } from '../write-section.mjs';
import { cpuOfProcesses, openDatabase } from './fixtures.js';
import { PAIRS, type PathPair } from './paths.js';
import {
  beyondTable,
  environment,
  messagesList,
  type PairReport,
  type PathSamples,
  REPRODUCE,
  roundTripTable,
  throughputTable,
} from './report.js';
import { countedInto, countPgQueries, type MessageLog } from './round-trips.js';

const quick = process.argv.includes('--quick');
const only = process.argv
  .find((arg) => arg.startsWith('--orms='))
  ?.slice('--orms='.length)
  .split(',');
const ROUNDS = quick ? 2 : 8;
const DURATION_MS = quick ? 300 : 2_500;
const WARM_MS = quick ? 300 : 1_000;
const TRIP_REQUESTS = quick ? 20 : 200;
// Twice the pool: every connection busy, a request always waiting for the next free one. 8 pools of 4 stay far
// below the server's 100 connections, beside other work.
const POOL_SIZE = 4;
const CONCURRENCY = 8;

const unknown = only?.filter((name) => !(name in PAIRS)) ?? [];
if (unknown.length > 0) {
  console.error(`unknown --orms ${unknown.join(', ')}; choose from: ${Object.keys(PAIRS).join(', ')}`);
  process.exit(2);
}
const chosen = Object.keys(PAIRS).filter(
  (name) => name === 'pg' || only === undefined || only.includes(name),
);

const database = await openDatabase();
const pairs: PathPair[] = [];
const failed: string[] = [];
try {
  for (const name of chosen) {
    try {
      pairs.push(await PAIRS[name]!({ schema: database.schema, poolSize: POOL_SIZE }));
    } catch (error) {
      // Not silently: the section names what was not measured and why, and the run still measures the others.
      if (name === 'pg') throw error;
      const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
      failed.push(`${name}: ${message}`);
      console.error(`${name}: not measured: ${message}`);
    }
  }
  const paths = pairs.flatMap((pair) => [pair.baseline, pair.oncely]);

  // Warm: every pool opens its connections (so the backends listed before a round are all it uses), every
  // library prepares and caches what it does once, and JIT settles.
  for (const [i, path] of paths.entries()) {
    await checkedRound(path, WARM_MS, `warm-${i}`);
  }

  const logs = await countRoundTrips(pairs);

  const samples: PathSamples[] = paths.map((path) => ({
    name: path.name,
    perSec: [],
    vsRawPg: [],
    p50: [],
    p99: [],
    clientCpuUs: [],
    serverCpuUs: [],
  }));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [...paths.keys()] : [...paths.keys()].reverse();
    const measured = new Map<number, Awaited<ReturnType<typeof runRound>>>();
    for (const i of order) measured.set(i, await checkedRound(paths[i]!, DURATION_MS, `r${round}-${i}`));
    const rawPg = measured.get(0)!.perSec;
    for (const [i, sample] of measured) {
      const row = samples[i]!;
      row.perSec.push(sample.perSec);
      row.vsRawPg.push(sample.perSec / rawPg);
      row.p50.push(sample.p50);
      row.p99.push(sample.p99);
      row.clientCpuUs.push(sample.clientCpuUs);
      row.serverCpuUs.push(sample.serverCpuUs);
    }
    console.log(`round ${round + 1}/${ROUNDS} done`);
  }

  const reports: PairReport[] = pairs.map((pair, i) => ({
    name: pair.name,
    counted: pair.counted,
    baseline: samples[2 * i]!,
    oncely: samples[2 * i + 1]!,
    baselineTrips: logs[2 * i]!.count / TRIP_REQUESTS,
    oncelyTrips: logs[2 * i + 1]!.count / TRIP_REQUESTS,
    baselineTexts: logs[2 * i]!.texts,
    oncelyTexts: logs[2 * i + 1]!.texts,
  }));
  const server = await serverVersion();
  const markdown = section(reports, server);
  console.log(`\n${markdown}\n`);
  if (failed.length > 0) {
    console.error('docs/benchmarks.md left as it is: not every library was measured');
    process.exitCode = 1;
  } else if (quick || only !== undefined) {
    console.log(`--quick/--orms: docs/benchmarks.md left as it is (run \`${REPRODUCE}\` for the real table)`);
  } else {
    writeSection('orm', markdown);
    console.log('docs/benchmarks.md: section orm written');
  }
} finally {
  for (const pair of pairs)
    await pair.close().catch((error) => console.error(`${pair.name}: close: ${error}`));
  await database.close();
}
// A library that failed to open may have left a pool open that nothing here can close: end the process anyway.
if (failed.length > 0) process.exit();

/**
 * One timed round of `path`, its server CPU read from the backends serving the paths, listed just before. A
 * backend that appeared during the round (a pool that opened a connection) would be missed, so that fails the run
 * rather than under-report.
 */
async function checkedRound(path: Scenario, durationMs: number, prefix: string) {
  const before = await database.backends();
  const sample = await runRound(path, CONCURRENCY, durationMs, prefix, () => cpuOfProcesses(before));
  const after = await database.backends();
  const opened = after.filter((pid) => !before.includes(pid));
  if (opened.length > 0 && !prefix.startsWith('warm')) {
    throw new Error(
      `${path.name}: ${opened.length} connection(s) opened during a timed round; its server CPU is short`,
    );
  }
  return sample;
}

/**
 * Each path's messages over sequential new requests: one request first for its texts, then TRIP_REQUESTS counted.
 * pg's `query` is wrapped for this only; postgres.js reports through its `debug` option all along.
 */
async function countRoundTrips(list: readonly PathPair[]): Promise<MessageLog[]> {
  const restore = countPgQueries();
  try {
    const logs: MessageLog[] = [];
    for (const [i, path] of list.flatMap((pair) => [pair.baseline, pair.oncely]).entries()) {
      const first: MessageLog = { count: 0, texts: [] };
      await countedInto(first, () => path.request(`trips-${i}-first`));
      const counted: MessageLog = { count: 0, texts: [] };
      await countedInto(counted, async () => {
        for (let n = 0; n < TRIP_REQUESTS; n++) await path.request(`trips-${i}-${n}`);
      });
      console.log(`${path.name}: ${(counted.count / TRIP_REQUESTS).toFixed(2)} round trips per request`);
      logs.push({ count: counted.count, texts: first.texts });
    }
    return logs;
  } finally {
    restore();
  }
}

async function serverVersion(): Promise<string> {
  const { default: pg } = await import('pg');
  const { DATABASE_URL } = await import('./fixtures.js');
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return `PostgreSQL ${(await client.query('SHOW server_version')).rows[0].server_version}`;
  } finally {
    await client.end();
  }
}

function section(reports: readonly PairReport[], server: string): string {
  const pgMode = reports.find((r) => r.name.startsWith('pg '));
  return [
    '## ORM transactional mode',
    '',
    environment(
      server,
      pairs.map((pair) => pair.version),
    ),
    '',
    'Every path is one new request writing one payment row (`orm_payments`: a text id, an integer) in a transaction:',
    'each library’s own transaction with its own insert API (Kysely’s `insertInto`, Drizzle’s `insert`, Knex’s',
    '`insert`, TypeORM’s `manager.insert`, MikroORM’s `em.persist(em.create(…))` flushed by `em.transactional`,',
    'postgres.js’s tagged template in `sql.begin`, Prisma’s `tx.payment.create` in `$transaction`), then the same',
    'write through oncely’s store on that same database object, in an `idempotent()` handler',
    '(`store.transactionOf(context)`), a new key each time. Raw pg (`BEGIN`, `INSERT`, `COMMIT` on a pg Pool) and',
    'pg mode (`new PostgresStore({ pool }).transactional()` with `transactionOf`) are measured beside them.',
    `Each library gets a pool of ${POOL_SIZE} connections; ${CONCURRENCY} requests are in flight.`,
    '',
    '### Round trips per new request',
    '',
    'Counted on the client over sequential requests: every `query` call of pg’s `Client` (each is one message',
    'answered before the next; several statements in one text are one message) for everything on pg, including',
    'Prisma’s adapter and MikroORM’s own copy of pg; for postgres.js, every query it reports to its `debug` option',
    '(its transaction’s queries go one after another). A statement’s first run on a connection, which postgres.js',
    'precedes with a Describe round trip, is not counted: every connection was warm.',
    '',
    roundTripTable(reports),
    '',
    '### What oncely adds to each library’s own transaction',
    '',
    `${ROUNDS} rounds of ${DURATION_MS} ms per path, the order reversed every other round; each figure is the oncely`,
    'path minus (or divided by) its library’s own in the same round, median (min to max) over the rounds.',
    `Server CPU is utime + stime, from /proc (10 ms ticks), of the backends serving the paths.${pgMode ? ' The pg row is pg mode beside raw pg.' : ''}`,
    '',
    beyondTable(reports),
    '',
    '### Every path beside raw pg',
    '',
    '"÷ raw pg" divides by raw pg’s requests/s in the same round; median (min–max) over the rounds.',
    '',
    throughputTable(reports),
    ...(failed.length > 0 ? ['', `Not measured: ${failed.join('; ')}.`] : []),
    '',
    '<details><summary>What one request of each path sends</summary>',
    '',
    messagesList(reports),
    '',
    '</details>',
  ].join('\n');
}
