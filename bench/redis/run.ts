// The Redis store benchmark: round trips per request, throughput against a one-round-trip SET baseline, and
// bytes per record. Writes the `redis` section of docs/benchmarks.md. Run it alone:
//   flock /tmp/oncely-bench.lock node --import tsx bench/redis/run.ts [--quick] [--costs]
// --costs measures only the Redis time of each script against the minimal layer, and writes nothing.

import { writeSection } from '../write-section.mjs';
import { startBench } from './fixtures.js';
import { measureMemory } from './memory.js';
import {
  environment,
  memoryTable,
  REPRODUCE,
  roundTripTable,
  type ThroughputRow,
  throughputTable,
} from './report.js';
import { measureRoundTrips } from './round-trips.js';
import { measureScriptCosts, scriptCostTable } from './script-cost.js';
import { runRound, scenarios } from './throughput.js';

const quick = process.argv.includes('--quick');
const costsOnly = process.argv.includes('--costs');
const COST_ROUNDS = quick ? 3 : 10;
const ROUNDS = quick ? 2 : 8;
const DURATION_MS = quick ? 300 : 1_000;
const CONCURRENCY = 64;

const bench = await startBench();
try {
  const redisVersion = /redis_version:(\S+)/.exec(await bench.admin.info('server'))?.[1] ?? 'unknown';
  const pid = bench.server.process.pid!;

  const costs = scriptCostTable(await measureScriptCosts(bench, COST_ROUNDS), COST_ROUNDS);
  console.log(`${costs}\n`);
  if (!costsOnly) {
    const { fresh, replay } = await measureRoundTrips(bench);
    console.log(roundTripTable(fresh, replay), '\n');

    const list = await scenarios(bench);
    for (const scenario of list) await runRound(scenario, pid, CONCURRENCY, DURATION_MS / 2); // warm-up
    const rows: ThroughputRow[] = list.map((s) => ({
      name: s.name,
      opsPerSec: [],
      ratio: [],
      clientCpuUs: [],
      redisCpuUs: [],
    }));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [...list.keys()] : [...list.keys()].reverse();
      const samples = new Map<number, Awaited<ReturnType<typeof runRound>>>();
      for (const i of order) samples.set(i, await runRound(list[i]!, pid, CONCURRENCY, DURATION_MS));
      const baseline = samples.get(0)!.opsPerSec;
      for (const [i, sample] of samples) {
        const row = rows[i]! as {
          opsPerSec: number[];
          ratio: number[];
          clientCpuUs: number[];
          redisCpuUs: number[];
        };
        row.opsPerSec.push(sample.opsPerSec);
        row.ratio.push(sample.opsPerSec / baseline);
        row.clientCpuUs.push(sample.clientCpuUs);
        row.redisCpuUs.push(sample.redisCpuUs);
      }
      process.stdout.write(`round ${round + 1}/${ROUNDS} done\n`);
    }
    const throughput = throughputTable(rows, ROUNDS, CONCURRENCY, DURATION_MS);
    console.log(`\n${throughput}\n`);

    const memory = memoryTable(await measureMemory(bench));
    console.log(`${memory}\n`);

    const markdown = [
      '## Redis store',
      '',
      environment(redisVersion),
      '',
      '### Round trips per request',
      '',
      roundTripTable(fresh, replay),
      '',
      '### Redis time per script call',
      '',
      costs,
      '',
      '### Store throughput',
      '',
      throughput,
      '',
      '### Bytes per record',
      '',
      memory,
    ].join('\n');
    if (quick) {
      console.log(`--quick: docs/benchmarks.md left as it is (run \`${REPRODUCE}\` for the real table)`);
    } else {
      writeSection('redis', markdown);
      console.log('docs/benchmarks.md: section redis written');
    }
  }
} finally {
  await bench.close();
}
