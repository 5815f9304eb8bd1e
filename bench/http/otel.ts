// What OpenTelemetry costs in the HTTP bench, in alternating pairs (A B, B A, …) of two oncely servers on Redis:
// - oncely against oncely-otel: the instrumentation with only @opentelemetry/api (no SDK): must stay within 2%;
// - oncely-sdk against oncely-otel-sdk: with the SDK registered, what the instrumentation adds (spans recorded and
//   exported to memory, metrics aggregated);
// - oncely against oncely-otel-sdk: the SDK and the instrumentation together.
// Prints a table (with the machine's load averages) and writes bench/results/http-otel.raw.json.
// Run: npm run build && flock /tmp/oncely-bench.lock node --import tsx bench/http/otel.ts
//   (PAIRS=8 ROUND_S=3 FRAMEWORKS=express,fastify WORKLOADS=unique,replay by default; COMPARISONS=api for the
//   first comparison only)
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { startRedis, stopAll } from '../../test/redis/support/redis-server.js';
import { completeReplayKeys, measureRound, type Round, type Workload } from './measure.js';
import { type Framework, type ServerProcess, startServer, type Variant } from './processes.js';
import { type Scenario, type Summary, summarize } from './summary.js';

const PAIRS = Number(process.env.PAIRS ?? 8);
const ROUND_S = Number(process.env.ROUND_S ?? 3);
const FRAMEWORKS = (process.env.FRAMEWORKS ?? 'express,fastify').split(',') as Framework[];
const WORKLOADS = (process.env.WORKLOADS ?? 'unique,replay').split(',') as Workload[];
const ALL_COMPARISONS: readonly (readonly [Variant, Variant])[] = [
  ['oncely', 'oncely-otel'],
  ['oncely-sdk', 'oncely-otel-sdk'],
  ['oncely', 'oncely-otel-sdk'],
];
// COMPARISONS=api: only the first (the instrumentation with the API alone against none).
const COMPARISONS = process.env.COMPARISONS === 'api' ? ALL_COMPARISONS.slice(0, 1) : ALL_COMPARISONS;

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const loadBefore = load();
const redisProcess = await startRedis();
const admin = new Redis({ port: redisProcess.port, host: '127.0.0.1' });
const rows: (Summary & { readonly reference: Variant; readonly load: string })[] = [];
const raw: (Scenario & { readonly reference: Variant })[] = [];

try {
  for (const framework of FRAMEWORKS) {
    const servers = new Map<Variant, ServerProcess>();
    for (const variant of new Set(COMPARISONS.flat()))
      servers.set(variant, await startServer(framework, variant, redisProcess.port));
    for (const workload of WORKLOADS) {
      for (const [reference, variant] of COMPARISONS) {
        const a = servers.get(reference)!;
        const b = servers.get(variant)!;
        const prefix = `otel-${framework}`;
        if (workload === 'replay')
          for (const server of [a, b]) await completeReplayKeys(server, `${prefix}-${server.variant}`);
        const round = (server: ServerProcess, seconds: number): Promise<Round> =>
          measureRound(server, admin, workload, `${prefix}-${server.variant}`, seconds);
        // One unmeasured round each: JIT warm-up, connection pools.
        await round(a, 1);
        await round(b, 1);
        const scenario: Scenario & { reference: Variant } = {
          framework,
          variant,
          workload,
          reference,
          pairs: [],
        };
        for (let pair = 0; pair < PAIRS; pair++) {
          const order = pair % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const);
          const rounds: Partial<Record<'a' | 'b', Round>> = {};
          for (const side of order) rounds[side] = await round(side === 'a' ? a : b, ROUND_S);
          scenario.pairs.push({ a: rounds.a!, b: rounds.b! });
        }
        raw.push(scenario);
        const summary = summarize(scenario, undefined);
        rows.push({ ...summary, reference, load: load() });
        console.log(
          `${framework} ${workload} ${reference} -> ${variant}: ${summary.ratio.toFixed(3)}× ` +
            `(${summary.ratioMin.toFixed(3)}-${summary.ratioMax.toFixed(3)}), ${summary.baselineRps.toFixed(0)} -> ` +
            `${summary.layerRps.toFixed(0)} req/s, p99 ${summary.p99BaselineMs} -> ${summary.p99LayerMs} ms, ` +
            `cpu +${summary.serverCpuAddedUs.toFixed(1)} us/req, failures ${summary.failures}, load ${load()}`,
        );
      }
      await admin.flushall();
    }
    await Promise.all([...servers.values()].map((server) => server.stop()));
  }
} finally {
  admin.disconnect();
  await stopAll([redisProcess]);
}

console.log(
  `\n${PAIRS} pairs of ${ROUND_S} s rounds, ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}`,
);
console.log(`load average (1, 5, 15 min) before: ${loadBefore}, after: ${load()}\n`);
console.log(
  '| framework | workload | A | B | B / A (median, min–max) | req/s A → B | p99 ms A → B | server CPU added | load after |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const row of rows)
  console.log(
    `| ${row.framework} | ${row.workload} | ${row.reference} | ${row.variant} | ${row.ratio.toFixed(3)} (${row.ratioMin.toFixed(3)}–${row.ratioMax.toFixed(3)}) | ` +
      `${row.baselineRps.toFixed(0)} → ${row.layerRps.toFixed(0)} | ${row.p99BaselineMs} → ${row.p99LayerMs} | ` +
      `${row.serverCpuAddedUs.toFixed(1)} µs/req | ${row.load} |`,
  );
mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../results/http-otel.raw.json', import.meta.url),
  JSON.stringify({ loadBefore, loadAfter: load(), rows, raw }, null, 2),
);
