import { execSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import type { Counter } from './fixtures.js';
import type { PurgeNumbers } from './purge.js';

export const REPRODUCE = 'flock /tmp/oncely-bench.lock node --import tsx bench/postgres/run.ts';

export interface ThroughputRow {
  readonly name: string;
  readonly perSec: number[];
  readonly ratio: number[];
  readonly p50: number[];
  readonly p99: number[];
  readonly clientCpuUs: number[];
  readonly serverCpuUs: number[];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const spread = (values: readonly number[], digits: number) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
const whole = (n: number) => Math.round(n).toLocaleString('en');
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export function environment(server: string, pgVersion: string): string {
  const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  const cpu = cpus();
  return (
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu[0]?.model ?? 'unknown CPU'} ` +
    `(${cpu.length} cores shared by the client, the server and other work, ${Math.round(totalmem() / 2 ** 30)} GiB), ` +
    `Node ${process.version}, ${server} on 127.0.0.1 (stock configuration, fsync on), pg ${pgVersion}, ` +
    `oncely at ${commit}; load average ${loadavg()[0]!.toFixed(1)} when the tables were written (other work ran on ` +
    'the machine too: read the ratios, not the absolute numbers). ' +
    `Reproduce: \`${REPRODUCE}\`.`
  );
}

export function roundTripTable(
  rows: readonly { name: string; counter: Counter; requests: number }[],
): string {
  return [
    'Counted on the client by wrapping `query` of the pool and of every client it hands out (one call is one round',
    'trip; statements count the parts of a multi-statement message), over sequential requests:',
    '',
    '| per request | round trips | statements |',
    '| --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.name} | **${(r.counter.roundTrips / r.requests).toFixed(2)}** | ${(r.counter.statements / r.requests).toFixed(2)} |`,
    ),
  ].join('\n');
}

export function throughputTable(rows: readonly ThroughputRow[], rounds: number, how: string): string {
  return [
    `${how}, ${rounds} rounds, the scenario order alternating between rounds; median (min–max) over the rounds.`,
    '"vs baseline" divides by the baseline of the same round. Server CPU is utime + stime of the backends serving',
    'the pool, from /proc.',
    '',
    '| scenario | requests/s | vs baseline | p50 ms | p99 ms | client CPU µs/req | server CPU µs/req |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${whole(median(r.perSec))} (${whole(Math.min(...r.perSec))}–${whole(Math.max(...r.perSec))}) | ` +
        `${spread(r.ratio, 2)} | ${spread(r.p50, 2)} | ${spread(r.p99, 2)} | ${spread(r.clientCpuUs, 0)} | ${spread(r.serverCpuUs, 0)} |`,
    ),
  ].join('\n');
}

export function purgeTable(p: PurgeNumbers): string {
  const latency = (r: PurgeNumbers['before']) =>
    `${whole(r.perSec)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(1)} ms`;
  return [
    `${whole(p.rows)} expired completed records (43-byte key, one header, 128-byte body) purged by`,
    `\`purgeExpired({ batchSize: ${whole(p.batchSize)} })\` while the transactional scenario kept writing to the same table:`,
    '',
    '| measure | value |',
    '| --- | --- |',
    `| purge throughput | **${whole(p.rowsPerSec)} rows/s** (${p.seconds.toFixed(2)} s) |`,
    `| table + indexes, full | ${mib(p.sizeFull)} (${whole(p.bytesPerRecord)} bytes per record) |`,
    `| after the purge | ${mib(p.sizeAfterPurge)} (dead rows wait for VACUUM) |`,
    `| after a plain VACUUM (no lock on requests) | ${mib(p.sizeAfterVacuum)} (the space is free for reuse, not returned to the OS) |`,
    `| after writing as many rows again | ${mib(p.sizeAfterRefill)} (reused: the table does not grow past its peak) |`,
    `| requests on the full table, before | ${latency(p.before)} |`,
    `| requests during the purge | ${latency(p.during)} |`,
  ].join('\n');
}
