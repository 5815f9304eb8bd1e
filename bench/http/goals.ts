// The HTTP cost goals of the engine (unique keys, replays, CPU per request, latency), read off one run's rows:
// each goal compares oncely with the minimal layer, a peer or the bare framework measured in the same run, so a
// busy machine moves both sides of a comparison alike.
import type { LatencySummary } from './latency.js';
import type { Workload } from './measure.js';
import type { Framework, Variant } from './processes.js';
import type { Summary } from './summary.js';

interface Goal {
  /** What is compared, in words. */
  readonly what: string;
  /** The bound, in words. */
  readonly bound: string;
  /** The measured value for one framework, or undefined when the run has no such rows. */
  measure(framework: Framework): { readonly value: string; readonly met: boolean } | undefined;
}

const x = (value: number) => `${value.toFixed(2)}×`;

export function goalsTable(
  summaries: readonly Summary[],
  latencies: readonly LatencySummary[],
  frameworks: readonly Framework[],
): string {
  const row = (framework: Framework, variant: Variant, workload: Workload) =>
    summaries.find((s) => s.framework === framework && s.variant === variant && s.workload === workload);
  // How much of another layer's throughput ratio oncely keeps, against a floor.
  const share = (what: string, workload: Workload, other: Variant, least: number): Goal => ({
    what,
    bound: `≥ ${least}×`,
    measure: (f) => {
      const mine = row(f, 'oncely', workload);
      const theirs = row(f, other, workload);
      if (mine === undefined || theirs === undefined) return undefined;
      const kept = mine.ratio / theirs.ratio;
      return { value: x(kept), met: kept >= least };
    },
  });
  // CPU added per new request as a multiple of the minimal layer's, against a ceiling. A minimal layer that adds
  // nothing measurable (0 or less) leaves no multiple to read.
  const cpu = (what: string, pick: (summary: Summary) => number, most: number): Goal => ({
    what,
    bound: `≤ ${most}×`,
    measure: (f) => {
      const mine = row(f, 'oncely', 'unique');
      const floor = row(f, 'minimal', 'unique');
      if (mine === undefined || floor === undefined || pick(floor) <= 0) return undefined;
      const times = pick(mine) / pick(floor);
      return {
        value: `${x(times)} (${pick(mine).toFixed(1)} vs ${pick(floor).toFixed(1)} µs)`,
        met: times <= most,
      };
    },
  });
  const goals: Goal[] = [
    share('unique keys: throughput ratio, as a share of the minimal layer’s', 'unique', 'minimal', 0.95),
    share(
      'unique keys: throughput ratio beside `@node-idempotency/core`’s (Express only)',
      'unique',
      'node-idempotency',
      1,
    ),
    cpu(
      'server CPU added per new request, as a multiple of the minimal layer’s',
      (s) => s.serverCpuAddedUs,
      1.5,
    ),
    cpu(
      'Redis CPU per new request, as a multiple of the minimal layer’s (INFO CPU, wall-clock µs)',
      (s) => s.redisCpuAddedUs,
      1.25,
    ),
    share(
      'replay without the local cache: throughput ratio, as a share of the minimal layer’s',
      'replay',
      'minimal',
      0.98,
    ),
    {
      what: 'replay with the local cache: throughput beside the bare framework',
      bound: '≥ 1.2×',
      measure: (f) => {
        const cached = row(f, 'oncely-cache', 'replay');
        return cached === undefined ? undefined : { value: x(cached.ratio), met: cached.ratio >= 1.2 };
      },
    },
    {
      what: 'p99 added at a steady 1,000 requests/s, fresh keys',
      bound: '≤ 1 ms',
      measure: (f) => {
        const latency = latencies.find((l) => l.framework === f && l.variant === 'oncely');
        if (latency === undefined) return undefined;
        const addedMs = (latency.p99LayerUs - latency.p99BaselineUs) / 1000;
        return { value: `${addedMs >= 0 ? '+' : ''}${addedMs.toFixed(2)} ms`, met: addedMs <= 1 };
      },
    },
  ];
  const cell = (goal: Goal, framework: Framework) => {
    const measured = goal.measure(framework);
    if (measured === undefined) return '';
    return `${measured.value} ${measured.met ? 'met' : '**not met**'}`;
  };
  const lines = goals.map(
    (goal) => `| ${goal.what} | ${goal.bound} | ${frameworks.map((f) => cell(goal, f)).join(' | ')} |`,
  );
  return [
    `| goal | bound | ${frameworks.join(' | ')} |`,
    `| --- | --- | ${frameworks.map(() => '---').join(' | ')} |`,
    ...lines,
  ].join('\n');
}
