// The markdown summary of a proof run (the JSON report has everything; this is what a person reads).
import type { ProofReport, StoreReport } from './harness.js';

const n = (value: number) => value.toLocaleString('en-US');
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const STORE_NAMES: Record<StoreReport['kind'], string> = {
  redis: 'Redis standalone',
  cluster: 'Redis Cluster (3 masters)',
  postgres: 'PostgreSQL, plain store',
  'postgres-tx': 'PostgreSQL, transactional mode',
};

export function storeName(kind: StoreReport['kind']): string {
  return STORE_NAMES[kind];
}

export function markdown(report: ProofReport): string {
  const lines: string[] = [];
  const { settings, machine } = report;
  lines.push(`# oncely proof run ${report.runId} (${report.profile})`);
  lines.push('');
  lines.push(
    `${report.startedAt}, ${s(report.durationMs)} in all, on ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node} (load average at start ${machine.loadAverage.join(' / ')}).`,
  );
  lines.push('');
  lines.push(
    `Per store: ${n(settings.requests)} requests over ${n(settings.keys)} keys from ${settings.clients} client processes × ${settings.concurrency} operations in flight, against 4 app server processes (Express, Fastify, Hono, node:http) sharing the store; lease ${n(settings.leaseMs)} ms, waitMs ${n(settings.waitMs)} ms on /pay-wait, store timeout ${n(settings.storeTimeoutMs)} ms, client timeout ${n(settings.timeoutMs)} ms, ${(settings.lostProbability * 100).toFixed(1)}% of requests dropped by the client before the answer.`,
  );
  lines.push('');
  lines.push(`**Violations: ${report.violations}.**`);
  lines.push('');
  lines.push(
    '| store | requests (+ late retries) | keys | req/s | p50 | p99 | faults | effects | violations | time |',
  );
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |');
  for (const store of report.stores) {
    const effects = Object.entries(store.result.effects)
      .map(([name, count]) => `${name} ${n(count)}`)
      .join(', ');
    lines.push(
      `| ${storeName(store.kind)} | ${n(store.requests)} (+${n(store.finalRequests)}) | ${n(store.result.keysUsed)} | ${n(store.throughput)} | ${store.latencyMs.p50} ms | ${store.latencyMs.p99} ms | ${store.faults.length} | ${effects} | ${store.result.violations} | ${s(store.durationMs)} |`,
    );
  }
  for (const store of report.stores) {
    lines.push('');
    lines.push(`## ${storeName(store.kind)}`);
    lines.push('');
    lines.push(
      `${n(store.requests)} requests (${n(store.operations)} operations) in ${s(store.loadMs)}, ${n(store.throughput)} req/s; latency p50 ${store.latencyMs.p50} ms, p90 ${store.latencyMs.p90} ms, p99 ${store.latencyMs.p99} ms, max ${store.latencyMs.max} ms. Answers: ${Object.entries(
        store.outcomes,
      )
        .filter(([, count]) => count > 0)
        .map(([outcome, count]) => `${outcome} ${n(count)}`)
        .join(', ')}.`,
    );
    lines.push('');
    lines.push('| fault | at | what | lasted | recovered after | failed requests |');
    lines.push('| --- | ---: | --- | ---: | ---: | ---: |');
    for (const fault of store.faults) {
      lines.push(
        `| ${fault.name} | ${(fault.at * 100).toFixed(0)}% | ${fault.detail} | ${n(fault.endedAt - fault.startedAt)} ms | ${fault.recoveryMs === null || fault.recoveryMs === undefined ? 'not within the run' : `${n(fault.recoveryMs)} ms`} | ${n(fault.failuresDuring ?? 0)} |`,
      );
    }
    lines.push('');
    lines.push('| check | violations |');
    lines.push('| --- | ---: |');
    for (const check of store.result.checks) lines.push(`| ${check.description} | ${check.count} |`);
    lines.push('');
    lines.push(
      `Effects: ${Object.entries(store.result.effects)
        .map(([name, count]) => `${name} ${n(count)}`)
        .join(', ')}; keys with more than one execution: ${n(store.result.keysWithReruns)}.`,
    );
    for (const note of store.result.notes) lines.push('', `Note: ${note}.`);
    const failing = store.result.checks.filter((check) => check.count > 0);
    for (const check of failing) {
      lines.push('', `### ${check.name}: ${check.count}`, '', '```json');
      for (const example of check.examples) lines.push(JSON.stringify(example));
      lines.push('```');
    }
  }
  lines.push('');
  return lines.join('\n');
}
