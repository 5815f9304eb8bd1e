// The HTTP benchmark: every adapter with the Redis store against the same framework without oncely, the npm
// peers beside them, in alternating A/B rounds; writes the `http` section of docs/benchmarks.md and the chart.
// Run: flock /tmp/oncely-bench.lock node --import tsx bench/http/run.ts   (PAIRS=8 ROUND_S=3 by default)
// LATENCY_ONLY=1 measures only the latency table again and keeps the throughput rows of the last full run
// (bench/results/http.raw.json).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { startRedis, stopAll } from '../../test/redis/support/redis-server.js';
import { writeSection } from '../write-section.mjs';
import { ratioChart } from './chart.js';
import { type LatencySummary, latencyPairs } from './latency.js';
import { alternatingPairs, completeReplayKeys, measureRound, type Workload } from './measure.js';
import { type Framework, type ServerProcess, startServer, type Variant } from './processes.js';
import { report } from './report.js';
import { machine, packageVersion } from './run-info.js';
import { storm } from './storm.js';
import { type Scenario, type Summary, summarize, summaryLine } from './summary.js';

const PAIRS = Number(process.env.PAIRS ?? 8);
const ROUND_S = Number(process.env.ROUND_S ?? 3);
const FRAMEWORKS = (process.env.FRAMEWORKS ?? 'express,fastify,hono,node').split(',') as Framework[];
const WITH_PEERS = process.env.PEERS !== '0';
const WRITE = process.env.WRITE !== '0';
// Latency below saturation: a fixed rate every server keeps up with.
const LATENCY = { rate: Number(process.env.LATENCY_RATE ?? 1000), seconds: 5, pairs: 3 };
const LATENCY_ONLY = process.env.LATENCY_ONLY === '1';
const RAW = new URL('../results/http.raw.json', import.meta.url);

const redisProcess = await startRedis();
const admin = new Redis({ port: redisProcess.port, host: '127.0.0.1' });
const redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? 'unknown';
const previous = LATENCY_ONLY
  ? (JSON.parse(readFileSync(RAW, 'utf8')) as { summaries: Summary[]; raw: Scenario[] })
  : undefined;
const summaries: Summary[] = previous?.summaries ?? [];
const latencies: LatencySummary[] = [];
const raw: Scenario[] = previous?.raw ?? [];

try {
  for (const framework of FRAMEWORKS) {
    const variants: Variant[] = ['oncely', 'oncely-cache', 'oncely-memory', 'minimal'];
    if (framework === 'express' && WITH_PEERS) variants.push('express-idempotency', 'node-idempotency');
    const baseline = await startServer(framework, 'baseline', redisProcess.port);
    const layers = new Map<Variant, ServerProcess>();
    for (const variant of variants)
      layers.set(variant, await startServer(framework, variant, redisProcess.port));
    const plan: [Variant, Workload][] = [
      ['oncely', 'unique'],
      ['oncely', 'replay'],
      ['oncely-cache', 'replay'],
      // The layer on a MemoryStore: what the adapter and engine cost without any store round trip.
      ['oncely-memory', 'unique'],
      // The floor: the least a layer on Redis can do (two scripts, nothing else), to read the rows above against.
      ['minimal', 'unique'],
      ['minimal', 'replay'],
    ];
    if (framework === 'express' && WITH_PEERS) {
      plan.push(['express-idempotency', 'unique'], ['express-idempotency', 'replay']);
      plan.push(['node-idempotency', 'unique'], ['node-idempotency', 'replay']);
    }
    for (const [variant, workload] of LATENCY_ONLY ? [] : plan) {
      const layer = layers.get(variant)!;
      const replayPrefix = `r-${framework}-${variant}`;
      if (workload === 'replay') await completeReplayKeys(layer, replayPrefix);
      const pairs = await alternatingPairs(
        baseline,
        layer,
        { pairs: PAIRS, roundS: ROUND_S },
        (server, seconds) => measureRound(server, admin, workload, replayPrefix, seconds),
      );
      const scenario: Scenario = { framework, variant, workload, pairs };
      raw.push(scenario);
      const stormResult =
        workload === 'unique' ? await storm(layer, admin, `${framework}-${variant}`) : undefined;
      const summary = summarize(scenario, stormResult);
      summaries.push(summary);
      console.log(`${framework} ${variant} ${workload}: ${summaryLine(summary)}`);
    }
    // On an empty Redis: the throughput rounds leave millions of records behind, and a Redis that big stalls now
    // and then (rehashing, allocation), which would land on whichever variant makes more round trips.
    await admin.flushall();
    for (const variant of ['oncely', 'minimal'] as const) {
      const latency = await latencyPairs(framework, variant, baseline, layers.get(variant)!, LATENCY);
      latencies.push(latency);
      console.log(
        `${framework} ${variant} at ${latency.rate}/s: p50 ${latency.p50BaselineUs.toFixed(0)} -> ${latency.p50LayerUs.toFixed(0)} us, p99 ${latency.p99BaselineUs.toFixed(0)} -> ${latency.p99LayerUs.toFixed(0)} us, failures ${latency.failures}`,
      );
    }
    await Promise.all([baseline, ...layers.values()].map((server) => server.stop()));
  }
} finally {
  admin.disconnect();
  await stopAll([redisProcess]);
}

mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
writeFileSync(RAW, JSON.stringify({ summaries, latencies, raw }, null, 2));
if (WRITE) {
  const markdown = report(summaries, latencies, {
    date: new Date().toISOString().slice(0, 10),
    command: 'flock /tmp/oncely-bench.lock node --import tsx bench/http/run.ts',
    machine: machine(),
    versions: `express ${packageVersion('express')}, fastify ${packageVersion('fastify')}, hono ${packageVersion('hono')}, ioredis ${packageVersion('ioredis')}, autocannon ${packageVersion('autocannon')}, express-idempotency ${packageVersion('express-idempotency')}, @node-idempotency/core ${packageVersion('@node-idempotency/core')}, Redis ${redisVersion}`,
    pairs: PAIRS,
    roundSeconds: ROUND_S,
    latencyOnly: LATENCY_ONLY,
  });
  writeSection('http', markdown);
  writeFileSync(
    new URL('./chart.svg', import.meta.url),
    ratioChart(
      summaries,
      `oncely HTTP adapters on Redis: throughput vs the bare framework (${PAIRS} A/B pairs, median and range)`,
    ),
  );
}
console.log('done');
