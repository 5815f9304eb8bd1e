/**
 * @module The DynamoDB benchmark's Markdown: the environment line, calls and capacity units per request kind as
 * DynamoDB answers (the refusal carrying the item), and the calls on an emulator whose refusals carry none.
 */
import { cpus } from 'node:os';
import { measuredRevision } from '../mysql/revision.js';

export const REPRODUCE = 'flock /tmp/oncely-bench.lock node --import tsx bench/dynamodb/run.ts';

/** One request kind, measured over several runs on fresh keys. */
export interface KindReport {
  readonly name: string;
  /** The calls of one run (`PutItem (refused) + PutItem`), or several forms where the runs differed. */
  readonly sequences: readonly string[];
  readonly calls: number;
  readonly wcu: number;
  /** Write units of refused writes, computed by DynamoDB's billing rule (their answer reports none). */
  readonly computedWcu: number;
  readonly rcu: number;
  /** Mean bytes of the item a refusal of the request met (returned with it), if one did. */
  readonly metBytes: number | undefined;
  /** Mean bytes of the record's item after the request. */
  readonly afterBytes: number | undefined;
}

const bytes = (n: number | undefined) => (n === undefined ? '—' : `${Math.round(n).toLocaleString('en')} B`);
const units = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

export function environment(versions: readonly string[], runs: number): string {
  const commit = measuredRevision();
  return (
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus()[0]?.model ?? 'unknown CPU'}, ` +
    `Node ${process.version}, ${versions.join(', ')}, oncely at ${commit}; each kind run ${runs} times on fresh ` +
    `keys (the figures are means; every run sent the same calls unless listed). Reproduce: \`${REPRODUCE}\` ` +
    '(or `npm run bench -- dynamodb`).'
  );
}

export function capacityTable(kinds: readonly KindReport[]): string {
  return [
    '| request | calls | write units | of them, refused writes (computed) | read units | item a refusal met | item after |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...kinds.map(
      (k) =>
        `| ${k.name} | ${k.sequences.join(' / ')} | **${units(k.wcu)}** | ${units(k.computedWcu)} | ${units(k.rcu)} | ` +
        `${bytes(k.metBytes)} | ${bytes(k.afterBytes)} |`,
    ),
  ].join('\n');
}

export function fallbackTable(kinds: readonly KindReport[]): string {
  return [
    '| request | calls | read units of the extra reads |',
    '| --- | --- | --- |',
    ...kinds.map((k) => `| ${k.name} | ${k.sequences.join(' / ')} | ${units(k.rcu)} |`),
  ].join('\n');
}
