/**
 * @module The ORM benchmark's Markdown: the environment line, round trips per new request, oncely's cost beyond
 * each library's own transaction (beside pg mode's), every path's throughput beside raw pg, and what one request of
 * each path sends.
 */
import { execSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { median } from '../postgres/report.js';

export const REPRODUCE = 'flock /tmp/oncely-bench.lock node --import tsx bench/orm/run.ts';

/** One path's numbers, one entry per round. */
export interface PathSamples {
  readonly name: string;
  readonly perSec: number[];
  /** Requests/s divided by raw pg's in the same round. */
  readonly vsRawPg: number[];
  readonly p50: number[];
  readonly p99: number[];
  readonly clientCpuUs: number[];
  readonly serverCpuUs: number[];
}

/** A library's pair: its own transaction and the same through oncely, with their round trips counted. */
export interface PairReport {
  readonly name: string;
  readonly counted: 'pg' | 'postgres.js';
  readonly baseline: PathSamples;
  readonly oncely: PathSamples;
  readonly baselineTrips: number;
  readonly oncelyTrips: number;
  /** One request's messages, shortened, of each path. */
  readonly baselineTexts: readonly string[];
  readonly oncelyTexts: readonly string[];
}

const range = (values: readonly number[], digits: number) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
const whole = (values: readonly number[]) => {
  const n = (v: number) => Math.round(v).toLocaleString('en');
  return `${n(median(values))} (${n(Math.min(...values))}–${n(Math.max(...values))})`;
};
const signed = (values: readonly number[]) => {
  const s = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(Math.round(v))}`;
  return `${s(median(values))} (${s(Math.min(...values))} to ${s(Math.max(...values))})`;
};
const trips = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
/** Per round: the oncely path's value minus its library's own, paired by round (so both ran minutes apart at most). */
const beyond = (pair: PairReport, of: (s: PathSamples) => number[]) =>
  of(pair.oncely).map((value, round) => value - of(pair.baseline)[round]!);

export function environment(server: string, versions: readonly string[]): string {
  const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  const cpu = cpus();
  return (
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu[0]?.model ?? 'unknown CPU'} ` +
    `(${cpu.length} cores shared by the client, the server and other work, ${Math.round(totalmem() / 2 ** 30)} GiB), ` +
    `Node ${process.version}, ${server} on 127.0.0.1 (stock configuration, fsync on), ${versions.join(', ')}; ` +
    `oncely at ${commit}; load average ${loadavg()[0]!.toFixed(1)} when the tables were written (other work ran on ` +
    'the machine too: read the ratios and differences, not the absolute numbers). ' +
    `Reproduce: \`${REPRODUCE}\` (or \`npm run bench -- orm\`).`
  );
}

export function roundTripTable(pairs: readonly PairReport[]): string {
  return [
    '| library | its own transaction | through oncely | beyond its own transaction |',
    '| --- | --- | --- | --- |',
    ...pairs.map(
      (p) =>
        `| ${p.name} | ${trips(p.baselineTrips)} | ${trips(p.oncelyTrips)} | **+${trips(p.oncelyTrips - p.baselineTrips)}** |`,
    ),
  ].join('\n');
}

export function beyondTable(pairs: readonly PairReport[]): string {
  return [
    '| library | requests/s through oncely ÷ its own | client CPU µs/req beyond | server CPU µs/req beyond | p50 ms, own → oncely |',
    '| --- | --- | --- | --- | --- |',
    ...pairs.map((p) => {
      const ratio = p.oncely.perSec.map((value, round) => value / p.baseline.perSec[round]!);
      const p50 = `${median(p.baseline.p50).toFixed(2)} → ${median(p.oncely.p50).toFixed(2)}`;
      return (
        `| ${p.name} | ${range(ratio, 2)} | ${signed(beyond(p, (s) => s.clientCpuUs))} | ` +
        `${signed(beyond(p, (s) => s.serverCpuUs))} | ${p50} |`
      );
    }),
  ].join('\n');
}

export function throughputTable(pairs: readonly PairReport[]): string {
  const rows = pairs.flatMap((p) => [p.baseline, p.oncely]);
  return [
    '| path | requests/s | ÷ raw pg | p50 ms | p99 ms | client CPU µs/req | server CPU µs/req |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${whole(r.perSec)} | ${range(r.vsRawPg, 2)} | ${range(r.p50, 2)} | ${range(r.p99, 2)} | ` +
        `${whole(r.clientCpuUs)} | ${whole(r.serverCpuUs)} |`,
    ),
  ].join('\n');
}

/** What one request of each path sends, message by message (texts shortened; `$1` are bound parameters). */
export function messagesList(pairs: readonly PairReport[]): string {
  const code = (text: string) => `\`${text.replaceAll('`', "'")}\``;
  return pairs
    .flatMap((p) => [
      `- ${p.baseline.name}: ${p.baselineTexts.map(code).join(' → ')}`,
      `- ${p.oncely.name}: ${p.oncelyTexts.map(code).join(' → ')}`,
    ])
    .join('\n');
}
