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
  // Share of one ratio in another: how much of the other layer's throughput ratio oncely keeps.
  const ratioOf = (framework: Framework, workload: Workload, other: Variant, variant: Variant = 'oncely') => {
    const mine = row(framework, variant, workload);
    const theirs = row(framework, other, workload);
    return mine && theirs ? mine.ratio / theirs.ratio : undefined;
  };
  // CPU added per request as a multiple of the minimal layer's. A minimal layer that adds nothing measurable
  // (0 or less) leaves no multiple to read.
  const cpuOf = (framework: Framework, workload: Workload, pick: (summary: Summary) => number) => {
    const mine = row(framework, 'oncely', workload);
    const floor = row(framework, 'minimal', workload);
    if (mine === undefined || floor === undefined || pick(floor) <= 0) return undefined;
    return { mine: pick(mine), floor: pick(floor), times: pick(mine) / pick(floor) };
  };
  const goals: Goal[] = [
    {
      what: 'unique keys: throughput ratio, as a share of the minimal layer’s',
      bound: '≥ 0.95×',
      measure: (f) => {
        const share = ratioOf(f, 'unique', 'minimal');
        return share === undefined ? undefined : { value: x(share), met: share >= 0.95 };
      },
    },
    {
      what: 'unique keys: throughput ratio beside `@node-idempotency/core`’s (Express only)',
      bound: '≥ 1×',
      measure: (f) => {
        const share = ratioOf(f, 'unique', 'node-idempotency');
        return share === undefined ? undefined : { value: x(share), met: share >= 1 };
      },
    },
    {
      what: 'server CPU added per new request, as a multiple of the minimal layer’s',
      bound: '≤ 1.5×',
      measure: (f) => {
        const cpu = cpuOf(f, 'unique', (s) => s.serverCpuAddedUs);
        return cpu === undefined
          ? undefined
          : {
              value: `${x(cpu.times)} (${cpu.mine.toFixed(1)} vs ${cpu.floor.toFixed(1)} µs)`,
              met: cpu.times <= 1.5,
            };
      },
    },
    {
      what: 'Redis CPU per new request, as a multiple of the minimal layer’s (INFO CPU, wall-clock µs)',
      bound: '≤ 1.25×',
      measure: (f) => {
        const cpu = cpuOf(f, 'unique', (s) => s.redisCpuAddedUs);
        return cpu === undefined
          ? undefined
          : {
              value: `${x(cpu.times)} (${cpu.mine.toFixed(1)} vs ${cpu.floor.toFixed(1)} µs)`,
              met: cpu.times <= 1.25,
            };
      },
    },
    {
      what: 'replay without the local cache: throughput ratio, as a share of the minimal layer’s',
      bound: '≥ 0.98×',
      measure: (f) => {
        const share = ratioOf(f, 'replay', 'minimal');
        return share === undefined ? undefined : { value: x(share), met: share >= 0.98 };
      },
    },
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
