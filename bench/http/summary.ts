import type { Round, Workload } from './measure.js';
import type { Framework, Variant } from './processes.js';
import type { StormOutcome } from './storm.js';

export interface Scenario {
  readonly framework: Framework;
  readonly variant: Variant;
  readonly workload: Workload;
  /** Rounds in A/B pairs: `a` the framework without a layer, `b` with it, measured back to back. */
  readonly pairs: { readonly a: Round; readonly b: Round }[];
}

export interface Summary {
  readonly framework: Framework;
  readonly variant: Variant;
  readonly workload: Workload;
  readonly pairs: number;
  readonly baselineRps: number;
  readonly layerRps: number;
  /** Median of the per-pair throughput ratios (layer / baseline), and their min and max. */
  readonly ratio: number;
  readonly ratioMin: number;
  readonly ratioMax: number;
  readonly p99BaselineMs: number;
  readonly p99LayerMs: number;
  /** CPU µs per request the layer adds, medians of each side subtracted. */
  readonly serverCpuAddedUs: number;
  readonly redisCpuAddedUs: number;
  readonly failures: number;
  readonly storm?: StormOutcome | undefined;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function summarize(scenario: Scenario, storm: StormOutcome | undefined): Summary {
  const { pairs } = scenario;
  const ratios = pairs.map(({ a, b }) => b.rps / a.rps);
  const side = (pick: (round: Round) => number, which: 'a' | 'b') =>
    median(pairs.map((pair) => pick(pair[which])));
  return {
    framework: scenario.framework,
    variant: scenario.variant,
    workload: scenario.workload,
    pairs: pairs.length,
    baselineRps: side((round) => round.rps, 'a'),
    layerRps: side((round) => round.rps, 'b'),
    ratio: median(ratios),
    ratioMin: Math.min(...ratios),
    ratioMax: Math.max(...ratios),
    p99BaselineMs: side((round) => round.p99Ms, 'a'),
    p99LayerMs: side((round) => round.p99Ms, 'b'),
    serverCpuAddedUs: side((round) => round.serverCpuUs, 'b') - side((round) => round.serverCpuUs, 'a'),
    redisCpuAddedUs: side((round) => round.redisCpuUs, 'b') - side((round) => round.redisCpuUs, 'a'),
    failures: pairs.reduce((sum, { a, b }) => sum + a.failures + b.failures, 0),
    storm,
  };
}

/** One row of a run's progress on the terminal: the ratio, the rates, the CPU added, failures and the storm. */
export function summaryLine(summary: Summary): string {
  return (
    `${summary.ratio.toFixed(3)}× (${summary.ratioMin.toFixed(2)}-${summary.ratioMax.toFixed(2)}), ` +
    `${summary.baselineRps.toFixed(0)} -> ${summary.layerRps.toFixed(0)} req/s, p99 ${summary.p99BaselineMs} -> ${summary.p99LayerMs} ms, ` +
    `cpu +${summary.serverCpuAddedUs.toFixed(1)} us, redis +${summary.redisCpuAddedUs.toFixed(1)} us, failures ${summary.failures}` +
    (summary.storm ? `, storm ${JSON.stringify(summary.storm)}` : '')
  );
}
