// The PostgreSQL benchmark: a payments handler (one INSERT in a transaction) with and without oncely's
// transactional mode, round trips per request, and purge throughput and table size. Writes the `postgres`
// section of docs/benchmarks.md. Run it alone:
//   flock /tmp/oncely-bench.lock node --import tsx bench/postgres/run.ts [--quick]

import { writeSection } from '../write-section.mjs';
import { type Counter, countingPool, cpuOfProcesses, startBench, versions } from './fixtures.js';
import { measurePurge } from './purge.js';
import {
  environment,
  purgeTable,
  REPRODUCE,
  roundTripTable,
  type ThroughputRow,
  throughputTable,
} from './report.js';
import { runRound, scenarios } from './scenarios.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 8;
const DURATION_MS = quick ? 400 : 1_500;
const CONCURRENCY = 16;
const POOL_SIZE = 8;
const TRIP_REQUESTS = 200;
const PURGE_ROWS = quick ? 20_000 : 200_000;

const bench = await startBench(POOL_SIZE);
try {
  const server = (await bench.pool.query('SHOW server_version')).rows[0].server_version as string;
  const serverCpu = () => cpuOfProcesses(bench.backends);

  const trips: { name: string; counter: Counter; requests: number }[] = [];
  const counters = (await scenarios(bench.pool, bench.schema, bench.payments)).map(() => ({
    roundTrips: 0,
    statements: 0,
  }));
  for (const [i, counter] of counters.entries()) {
    const counted = await scenarios(countingPool(bench.pool, counter), bench.schema, bench.payments);
    const scenario = counted[i]!;
    Object.assign(counter, { roundTrips: 0, statements: 0 });
    for (let n = 0; n < TRIP_REQUESTS; n++) await scenario.request(`trips-${i}-${n}`);
    trips.push({ name: scenario.name, counter, requests: TRIP_REQUESTS });
  }
  console.log(`${roundTripTable(trips)}\n`);

  const list = await scenarios(bench.pool, bench.schema, bench.payments);
  for (const [i, s] of list.entries())
    await runRound(s, CONCURRENCY, DURATION_MS / 2, `warm-${i}`, serverCpu);
  const rows: ThroughputRow[] = list.map((s) => ({
    name: s.name,
    perSec: [],
    ratio: [],
    p50: [],
    p99: [],
    clientCpuUs: [],
    serverCpuUs: [],
  }));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [...list.keys()] : [...list.keys()].reverse();
    const samples = new Map<number, Awaited<ReturnType<typeof runRound>>>();
    for (const i of order) {
      samples.set(i, await runRound(list[i]!, CONCURRENCY, DURATION_MS, `r${round}-${i}`, serverCpu));
    }
    const baseline = samples.get(0)!.perSec;
    for (const [i, sample] of samples) {
      const row = rows[i]!;
      row.perSec.push(sample.perSec);
      row.ratio.push(sample.perSec / baseline);
      row.p50.push(sample.p50);
      row.p99.push(sample.p99);
      row.clientCpuUs.push(sample.clientCpuUs);
      row.serverCpuUs.push(sample.serverCpuUs);
    }
    process.stdout.write(`round ${round + 1}/${ROUNDS} done\n`);
  }
  const how = `${CONCURRENCY} requests in flight over a pool of ${POOL_SIZE} connections, ${DURATION_MS} ms per scenario`;
  const throughput = throughputTable(rows, ROUNDS, how);
  console.log(`\n${throughput}\n`);

  const purge = purgeTable(await measurePurge(bench, list[1]!, PURGE_ROWS, CONCURRENCY, serverCpu));
  console.log(`${purge}\n`);

  const markdown = [
    '## PostgreSQL store',
    '',
    environment(`PostgreSQL ${server}`, versions().pg),
    '',
    'The handler is the payments example: one `INSERT … RETURNING id` into a business table inside a',
    'transaction, a unique idempotency key per request. In transactional mode the key is claimed, the INSERT',
    'runs and the outcome is stored in that same transaction; the plain store records the key in statements of',
    'its own around the handler’s transaction.',
    '',
    '### Round trips per request',
    '',
    roundTripTable(trips),
    '',
    '### Throughput',
    '',
    throughput,
    '',
    '### Purge',
    '',
    purge,
  ].join('\n');
  if (quick) {
    console.log(`--quick: docs/benchmarks.md left as it is (run \`${REPRODUCE}\` for the real table)`);
  } else {
    writeSection('postgres', markdown);
    console.log('docs/benchmarks.md: section postgres written');
  }
} finally {
  await bench.close();
}
