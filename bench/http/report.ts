import { goalsTable } from './goals.js';
import type { LatencySummary } from './latency.js';
import type { Summary } from './summary.js';

export interface RunInfo {
  readonly date: string;
  readonly command: string;
  readonly machine: string;
  readonly versions: string;
  readonly pairs: number;
  readonly roundSeconds: number;
  /** Set when only the latency table was measured in this run (`LATENCY_ONLY=1`). */
  readonly latencyOnly?: boolean;
}

export const fixed = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const signed = (value: number, digits = 1) => `${value >= 0 ? '+' : ''}${fixed(value, digits)}`;

/** The storm column: ok or FAIL, and what the handler's executions and the answers' bodies showed. */
export function stormCell(summary: Summary): string {
  const storm = summary.storm;
  if (storm === undefined) return '';
  const verdict = storm.keysRunTwice === 0 && storm.keysWithDifferentBodies === 0 ? 'ok' : 'FAIL';
  return `${verdict}: ${storm.executions} runs for ${storm.keys} keys, ${storm.keysRunTwice} keys run twice+, ${storm.keysWithDifferentBodies} with differing 2xx bodies`;
}

/** oncely's ratio as a share of the minimal layer's in the same framework and workload ("of the floor"). */
function ofFloor(summary: Summary, all: readonly Summary[]): string {
  if (summary.variant !== 'oncely' && summary.variant !== 'oncely-cache') return '';
  const floor = all.find(
    (other) =>
      other.variant === 'minimal' &&
      other.framework === summary.framework &&
      other.workload === summary.workload,
  );
  return floor === undefined ? '' : `${Math.round((100 * summary.ratio) / floor.ratio)}%`;
}

function latencyRow(latency: LatencySummary): string {
  const added = latency.p99LayerUs - latency.p99BaselineUs;
  const ms = (us: number) => (us / 1000).toFixed(2);
  return `| ${latency.framework} | ${latency.variant} | ${fixed(latency.rate)}/s | ${ms(latency.p50BaselineUs)} → ${ms(latency.p50LayerUs)} | ${ms(latency.p99BaselineUs)} → ${ms(latency.p99LayerUs)} | **${signed(added / 1000, 2)}** | ${latency.failures} |`;
}

/**
 * The `http` section of docs/benchmarks.md. The chart is linked by its repository URL: docs/ ships in the package
 * and bench/ does not, so a relative link would be dead for every reader outside GitHub.
 */
export function report(
  summaries: readonly Summary[],
  latencies: readonly LatencySummary[],
  info: RunInfo,
): string {
  const rows = summaries.map((summary) => {
    const p99Added = summary.p99LayerMs - summary.p99BaselineMs;
    return `| ${summary.framework} | ${summary.variant} | ${summary.workload} | ${fixed(summary.baselineRps)} | ${fixed(summary.layerRps)} | **${summary.ratio.toFixed(2)}×** | ${summary.ratioMin.toFixed(2)}–${summary.ratioMax.toFixed(2)} | ${ofFloor(summary, summaries)} | ${fixed(summary.p99BaselineMs)} → ${fixed(summary.p99LayerMs)} (${signed(p99Added, 0)}) | ${signed(summary.serverCpuAddedUs)} | ${signed(summary.redisCpuAddedUs)} | ${summary.failures} | ${stormCell(summary)} |`;
  });
  const rate = latencies[0]?.rate ?? 0;
  const frameworks = [...new Set(summaries.map((summary) => summary.framework))];
  return `
### HTTP adapters (Redis store)

_Measured ${info.date} with \`${info.command}\`. ${info.machine}. ${info.versions}._

Each row compares a framework with an idempotency layer (B) against the same framework without one (A), both
serving \`POST /payments\` whose handler does one Redis write (its effect) and answers 201 JSON. Load: autocannon
on 127.0.0.1, ${50} connections, ${info.roundSeconds} s per round, ${info.pairs} A/B pairs per row in alternating
order (ABBA), servers in their own processes, a disposable \`redis-server\` of the run's own. **unique**: every
request has a fresh key (the layer claims, runs, stores: 2 round trips more than A). **replay**: 1,000 keys
completed beforehand, requested over and over (the layer answers from the store, or from the in-process cache
with \`oncely-cache\`; A still runs its handler). **oncely-memory**: the same layer on a \`MemoryStore\`, no store
round trip at all: the cost of the adapter and the engine alone. **minimal**: the floor, the least a layer on
Redis can do (\`bench/http/minimal.ts\`: one script claims or replays, one stores the body; no scoping, hashing,
fencing, lease, timeout, header policy or compression). Ratio: median of the per-pair ratios of requests per
second, with their min–max. **of floor**: oncely's ratio as a share of the minimal layer's. p99: medians of the
rounds (ms). CPU added: µs per request, B minus A, in the server process (utime+stime from /proc) and in
redis-server (INFO CPU). Failures: non-2xx answers or socket errors in all rounds. Storm: 100 concurrent identical
requests for each of 20 keys, executions counted by the handler.

| framework | layer | workload | A req/s | B req/s | B/A | spread | of floor | p99 ms A → B | server CPU µs/req | Redis CPU µs/req | failures | storm (20 keys × 100) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

![Throughput ratio per adapter and workload](https://raw.githubusercontent.com/oncely/oncely/main/bench/http/chart.svg)

**Latency below saturation.** At saturation (the table above) latency is concurrency divided by throughput, so
its p99 only restates the ratio. What the layer adds to one request shows at a rate the servers keep up with:
${fixed(rate)} requests per second with fresh keys, paced open-loop over keep-alive sockets and timed in
microseconds (\`bench/http/latency.ts\`), on a Redis emptied first (the throughput rounds leave millions of records
behind, and a Redis that big stalls now and then), ${latencies[0]?.pairs ?? 0} A/B pairs of 5 s, medians.${info.latencyOnly ? ` This table was measured again on its own (\`LATENCY_ONLY=1\`, ${info.date}); the throughput rows above are those of the full run before it.` : ''}

| framework | layer | rate | p50 ms A → B | p99 ms A → B | p99 added, ms | failures |
| --- | --- | --- | --- | --- | --- | --- |
${latencies.map(latencyRow).join('\n')}

**The cost goals.** What the engine is held to, each read off the rows above: oncely beside the minimal layer, a
peer or the bare framework of the same run. The Redis CPU row is a wall-clock reading of INFO CPU and swings with
the load; the instruction counts of the Redis section above measure the same cost without that noise.

${goalsTable(summaries, latencies, frameworks)}

Reading the tables: for unique keys, the layer's price is two store round trips per request (\`begin\` and
\`complete\`, each one Lua script) on top of the handler's own work. On this machine the two cores are shared by
the server, redis-server and autocannon, so every microsecond of CPU anywhere, Redis included, comes out of
throughput; the \`minimal\` rows show what the two round trips alone cost here, and the **of floor** column how much
of that floor oncely keeps while adding fencing, leases, timeouts, scoping, fingerprints and the header policy.
The difference between the \`oncely\` and \`oncely-memory\` rows is what the Redis store costs in the server
process (the ioredis client, two more socket writes and reads). A replay costs one round trip instead of the
handler's work, and with \`localCache\` none; the handler here is a single Redis write, so a replay has little to
save, and a handler that does real work (a payment provider call, a few SQL statements) gains more.

The peers are measured on Express with their Redis adapters: \`express-idempotency\` (with
\`express-idempotency-redis-adapter\`) and \`@node-idempotency/core\` (with \`@node-idempotency/storage-adapter-redis\`,
through the small Express glue in \`bench/http/peers.ts\`). Both keep their records as JSON strings and neither
has fencing or leases; \`express-idempotency\` checks and then acts in two steps, which its storm column shows.
Single runs swing by about ±10% on these two shared cores; the spread column shows it.
`;
}
