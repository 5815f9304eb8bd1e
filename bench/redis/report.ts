import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import type { MemoryRow } from './memory.js';
import type { RoundTrips } from './round-trips.js';

/** One scenario's samples, one per round. */
export interface ThroughputRow {
  readonly name: string;
  readonly opsPerSec: number[];
  readonly ratio: number[];
  readonly clientCpuUs: number[];
  readonly redisCpuUs: number[];
}

export const REPRODUCE = 'flock /tmp/oncely-bench.lock node --import tsx bench/redis/run.ts';

export function environment(redisVersion: string): string {
  const ioredis = JSON.parse(
    readFileSync(new URL('../../node_modules/ioredis/package.json', import.meta.url), 'utf8'),
  ) as {
    version: string;
  };
  const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  const cpu = cpus();
  return (
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu[0]?.model ?? 'unknown CPU'} ` +
    `(${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB), Node ${process.version}, Redis ${redisVersion} ` +
    `(a disposable redis-server the runner starts, no persistence, nothing else on it), ioredis ${ioredis.version}, ` +
    `oncely at ${commit}; load average ${loadavg()[0]!.toFixed(1)} when it finished (the 2 cores are shared with the ` +
    `other engineers' test runs, so absolute ops/s swing; the ratios are the claim). Reproduce: \`${REPRODUCE}\`.`
  );
}

export function roundTripTable(fresh: RoundTrips, replay: RoundTrips): string {
  const list = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort()
      .map(([name, n]) => `${name} ${n}`)
      .join(', ') || '—';
  const row = (name: string, r: RoundTrips) =>
    `| ${name} | **${r.serverScripts.toFixed(2)}** | ${list(r.clientCommands)} | ${list(r.insideScripts)} |`;
  return [
    `Through the Engine, ${fresh.requests.toLocaleString('en')} sequential requests each, counted on the server with`,
    '`INFO commandstats` (reset before each run) and on the client by wrapping `sendCommand`:',
    '',
    '| per request | round trips (scripts run) | commands the client sent | calls made inside the scripts |',
    '| --- | --- | --- | --- |',
    row('new request (begin + complete)', fresh),
    row('replay (begin returns the outcome)', replay),
  ].join('\n');
}

export function throughputTable(
  rows: readonly ThroughputRow[],
  rounds: number,
  concurrency: number,
  durationMs: number,
): string {
  const spread = (values: readonly number[], digits: number) =>
    `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  const thousands = (values: readonly number[]) =>
    `${Math.round(median(values)).toLocaleString('en')} (${Math.round(Math.min(...values)).toLocaleString('en')}–${Math.round(Math.max(...values)).toLocaleString('en')})`;
  return [
    `${concurrency} operations in flight on one connection, ${rounds} rounds of ${durationMs} ms per scenario, the order`,
    'alternating between rounds; median (min–max) over the rounds. "vs SET" divides by the SET baseline of the same round.',
    '',
    '| scenario | ops/s | vs SET | client CPU µs/op | Redis CPU µs/op |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${thousands(r.opsPerSec)} | ${spread(r.ratio, 2)} | ${spread(r.clientCpuUs, 1)} | ${spread(r.redisCpuUs, 1)} |`,
    ),
  ].join('\n');
}

export function memoryTable(rows: readonly MemoryRow[]): string {
  return [
    '`MEMORY USAGE <key> SAMPLES 0` on a default-configured Redis of records written through the Engine (bodies of',
    '1 KiB and more are brotli-compressed by `sealOutcome`, the headers are `content-type: application/json`), median',
    'of 200 records each; keys are the 43-character hashes the engine makes. The HTTP adapters send a 43-character',
    "fingerprint (SHA-256); `fingerprint 'f'` repeats the earlier tables' setting. The oncely 0.1 rows store the same",
    'outcomes with 0.1’s own scripts (a HASH per record), for comparison.',
    '',
    '| record | raw body | body as stored | whole record | record / raw body | Redis encoding |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.case} | ${r.rawBodyBytes || '—'} | ${r.storedBodyBytes || '—'} | ${r.recordBytes} | ${r.rawBodyBytes ? (r.recordBytes / r.rawBodyBytes).toFixed(2) : '—'} | ${r.encoding} |`,
    ),
  ].join('\n');
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
