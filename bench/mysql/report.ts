/**
 * @module The MySQL benchmark's Markdown: the environment line, round trips per request of each path on each
 * database, the timed rounds (each path beside its database's own transaction and beside PostgreSQL's same path),
 * the servers' CPU while the benchmark sent nothing, and what one request of each path sends.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { median } from '../postgres/report.js';
import { KIND_NAMES, KINDS, type PathKind } from './paths.js';
import { measuredRevision } from './revision.js';

export const REPRODUCE = 'flock /tmp/oncely-bench.lock node --import tsx bench/mysql/run.ts';

/** One database's paths as the tables show them: `PostgreSQL (pg)`, `MariaDB, mysql2`, … */
export interface DatabaseReport {
  readonly name: string;
  readonly paths: readonly PathReport[];
}

export interface PathReport {
  readonly kind: PathKind;
  /** Messages per request, counted over sequential requests. */
  readonly trips: number;
  /** One request's messages, shortened. */
  readonly texts: readonly string[];
  /** One entry per round. */
  readonly perSec: number[];
  /** Requests/s divided by its database's path without oncely, same round. */
  readonly vsOwn: number[];
  /** Requests/s divided by PostgreSQL's path of the same kind, same round. */
  readonly vsPostgres: number[];
  readonly p50: number[];
  readonly p99: number[];
  readonly clientCpuUs: number[];
  readonly serverCpuUs: number[];
  /** PostgreSQL only: the pool's backends' share of serverCpuUs. */
  readonly servingCpuUs: number[];
}

export interface Servers {
  /** `PostgreSQL 15.20 (…)` and its durability settings, for the environment line. */
  readonly postgres: string;
  readonly mariadb: string;
}

const range = (values: readonly number[], digits: number) =>
  values.length === 0
    ? '—'
    : `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
const whole = (values: readonly number[]) => {
  if (values.length === 0) return '—';
  const n = (v: number) => Math.round(v).toLocaleString('en');
  return `${n(median(values))} (${n(Math.min(...values))}–${n(Math.max(...values))})`;
};
const trips = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

export function environment(servers: Servers, versions: readonly string[]): string {
  const commit = measuredRevision();
  const cpu = cpus();
  return (
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu[0]?.model ?? 'unknown CPU'} ` +
    `(${cpu.length} cores shared by the client, both servers and other work, ${Math.round(totalmem() / 2 ** 30)} GiB), ` +
    `Node ${process.version}, ${servers.postgres} and ${servers.mariadb}, both on 127.0.0.1 in their stock ` +
    `configuration, ${versions.join(', ')}; oncely at ${commit}; load average ${loadavg()[0]!.toFixed(1)} when the ` +
    'tables were written (other work ran on the machine too: read the ratios, not the absolute numbers). ' +
    `Reproduce: \`${REPRODUCE}\` (or \`npm run bench -- mysql\`).`
  );
}

export function roundTripTable(databases: readonly DatabaseReport[]): string {
  return [
    `| per request | ${databases.map((d) => d.name).join(' | ')} |`,
    `| --- | ${databases.map(() => '---').join(' | ')} |`,
    ...KINDS.map((kind) => {
      const cells = databases.map((d) => {
        const path = d.paths.find((p) => p.kind === kind);
        return path === undefined ? '—' : `**${trips(path.trips)}**`;
      });
      return `| ${KIND_NAMES[kind]} | ${cells.join(' | ')} |`;
    }),
  ].join('\n');
}

export function throughputTable(databases: readonly DatabaseReport[]): string {
  return [
    '| database | path | requests/s | ÷ without oncely, same database | ÷ PostgreSQL’s same path | p50 ms | p99 ms | client CPU µs/req | server CPU µs/req, whole server | of it, the pool’s backends |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...databases.flatMap((d) =>
      d.paths.map(
        (p) =>
          `| ${d.name} | ${KIND_NAMES[p.kind]} | ${whole(p.perSec)} | ${range(p.vsOwn, 2)} | ${range(p.vsPostgres, 2)} | ` +
          `${range(p.p50, 2)} | ${range(p.p99, 2)} | ${whole(p.clientCpuUs)} | ${whole(p.serverCpuUs)} | ${whole(p.servingCpuUs)} |`,
      ),
    ),
  ].join('\n');
}

/** What one request of each path sends, message by message (texts shortened; `?` and `$1` are bound values). */
export function messagesList(databases: readonly DatabaseReport[]): string {
  const code = (text: string) => `\`${text.replaceAll('`', "'")}\``;
  return databases
    .flatMap((d) =>
      d.paths.map((p) => `- ${d.name}, ${KIND_NAMES[p.kind]}: ${p.texts.map(code).join(' → ')}`),
    )
    .join('\n');
}
