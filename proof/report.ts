// The markdown summary of a proof run (the JSON report has everything; this is what a person reads).
import type { FaultPlan, ProofReport, StoreReport } from './harness.js';
import { brokerName, messagingGuarantees, messagingMarkdown } from './messaging/report.js';
import { isTransactional } from './types.js';

const n = (value: number) => value.toLocaleString('en-US');
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const STORE_NAMES: Record<StoreReport['kind'], string> = {
  redis: 'Redis standalone',
  cluster: 'Redis Cluster (3 masters)',
  sentinel: 'Redis Sentinel (master + replica, `durable`)',
  postgres: 'PostgreSQL, plain store',
  'postgres-tx': 'PostgreSQL, transactional mode',
  'postgres-kysely': 'PostgreSQL, transactional mode through Kysely',
  'postgres-drizzle': 'PostgreSQL, transactional mode through Drizzle',
  'postgres-prisma': 'PostgreSQL, transactional mode through Prisma',
  mysql: 'MariaDB (`oncely/mysql`), plain store',
  'mysql-tx': 'MariaDB (`oncely/mysql`), transactional mode',
  dynamodb: 'DynamoDB API (dynalite on disk)',
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
  if (report.stores.length > 0)
    lines.push(
      `Per store (unless its section says otherwise): ${n(settings.requests)} requests over ${n(settings.keys)} keys from ${settings.clients} client processes × ${settings.concurrency} operations in flight, against 4 app server processes (Express, Fastify, Hono, node:http) sharing the store; lease ${n(settings.leaseMs)} ms, waitMs ${n(settings.waitMs)} ms on /pay-wait, store timeout ${n(settings.storeTimeoutMs)} ms, client timeout ${n(settings.timeoutMs)} ms, ${(settings.lostProbability * 100).toFixed(1)}% of requests dropped by the client before the answer.`,
    );
  lines.push('');
  lines.push(`**Violations: ${report.violations}.**`);
  if (report.stores.length > 0) {
    lines.push('');
    lines.push(
      '| store | requests (+ late retries) | keys | req/s | p50 | p99 | faults | effects | violations | time |',
    );
    lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |');
  }
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
      `${n(store.requests)} requests (${n(store.operations)} operations; ${n(store.planned)} planned, ${store.clients} clients × ${store.concurrency} in flight) in ${s(store.loadMs)}, ${n(store.throughput)} req/s; latency p50 ${store.latencyMs.p50} ms, p90 ${store.latencyMs.p90} ms, p99 ${store.latencyMs.p99} ms, max ${store.latencyMs.max} ms. Answers: ${Object.entries(
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
  if (settings.messaging !== undefined)
    lines.push(...messagingMarkdown(report.messaging, settings.messaging));
  lines.push('');
  return lines.join('\n');
}

const ms = (value: number | null | undefined) =>
  value === null || value === undefined ? 'not seen' : value >= 10_000 ? s(value) : `${n(value)} ms`;

function planLabel(planned: FaultPlan, leaseMs: number): string {
  const duration = n(planned.durationMs ?? 1_000);
  switch (planned.kind) {
    case 'server-kill':
      return `SIGKILL an app server mid-request, restart ${duration} ms later`;
    case 'server-stall':
      return planned.resumeOnTakeover
        ? 'SIGSTOP an owner past its lease, SIGCONT once a takeover holds its key'
        : `SIGSTOP an owner for lease + ${duration} ms (${n(leaseMs + (planned.durationMs ?? 0))} ms), then SIGCONT`;
    case 'store-restart':
      return `store restart: Redis SIGKILL, down ${duration} ms / Sentinel failover / PostgreSQL \`pg_terminate_backend\` / MariaDB sessions KILLed, connections refused ${duration} ms / dynalite SIGKILL, down ${duration} ms`;
    case 'script-flush':
      return '`SCRIPT FLUSH` (Redis)';
    case 'partition':
      return `partition app ↔ store for ${duration} ms`;
    case 'latency':
      return `+${n(planned.latencyMs ?? 0)} ms each way for ${duration} ms`;
  }
}

/** The "last proof run" section of docs/guarantees.md: figures, faults with recovery, violations. */
export function guaranteesSection(report: ProofReport, totalMs: number = report.durationMs): string {
  const { machine, settings } = report;
  const minutes = (ms: number) => (ms / 60_000).toFixed(1);
  const lines: string[] = [];
  lines.push(
    `Run \`${report.runId}\`, ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC: \`npm run proof\` took ${minutes(totalMs)} minutes (the HTTP and messaging phases ${minutes(report.durationMs)}, the rest the fuzz phase) on ${machine.cpus} × ${machine.cpuModel} (${machine.memoryGiB} GiB), Node ${machine.node}, load average ${machine.loadAverage[0]} at the start. Sizes: ${n(settings.requests)} requests and ${n(settings.keys)} keys planned per store (the load runs on to new keys until the last fault is lifted), ${settings.clients} client processes × ${settings.concurrency} operations in flight, 4 app server processes. Full report, in the repository (not in the npm package): [proof/results/full.md](https://github.com/oncely/oncely/blob/main/proof/results/full.md) ([JSON](https://github.com/oncely/oncely/blob/main/proof/results/full.json)).`,
  );
  lines.push('');
  lines.push(
    '| store | requests (+ late retry) | keys | faults injected | req/s | p50 | p99 | effects of lost claims (may re-run) | violations |',
  );
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |');
  for (const store of report.stores) {
    const effects = store.result.effects;
    const reruns = isTransactional(store.kind)
      ? `${n(effects['rolled-back attempts'] ?? 0)} attempts rolled back`
      : `killed ${n(effects['owner-killed'] ?? 0)}, lost ${n(effects['claim-lost'] ?? 0)}, unconfirmed ${n(effects['complete-unconfirmed'] ?? 0)}${
          effects['keys set back by a failover'] === undefined
            ? ''
            : `; keys a failover set back ${n(effects['keys set back by a failover'])} (two 2xx bodies: ${n(effects['of which two 2xx bodies'] ?? 0)})`
        }`;
    lines.push(
      `| ${storeName(store.kind)} | ${n(store.requests)} (+${n(store.finalRequests)}) | ${n(store.result.keysUsed)} | ${store.faults.length} | ${n(store.throughput)} | ${store.latencyMs.p50} ms | ${n(store.latencyMs.p99)} ms | ${reruns} | **${store.result.violations}** |`,
    );
  }
  lines.push('');
  lines.push(
    'Recovery after each fault (from the moment it was lifted to the first full second in which no client met a 503, a timeout or a refused connection), and the failed requests it cost:',
  );
  lines.push('');
  lines.push(`| fault | ${report.stores.map((store) => storeName(store.kind)).join(' | ')} |`);
  lines.push(`| --- | ${report.stores.map(() => '---:').join(' | ')} |`);
  report.settings.faults.forEach((planned, step) => {
    const cells = report.stores.map((store) => {
      const fault = store.faults.find((f) => f.step === step);
      return fault === undefined ? '—' : `${ms(fault.recoveryMs)} (${n(fault.failuresDuring ?? 0)})`;
    });
    lines.push(
      `| ${(planned.at * 100).toFixed(0)}%: ${planLabel(planned, report.settings.leaseMs)} | ${cells.join(' | ')} |`,
    );
  });
  if (settings.messaging !== undefined)
    lines.push(...messagingGuarantees(report.messaging, settings.messaging));
  lines.push('');
  const failing = [
    ...report.stores.flatMap((store) =>
      store.result.checks.filter((c) => c.count > 0).map((check) => ({ name: storeName(store.kind), check })),
    ),
    ...report.messaging.flatMap((broker) =>
      broker.result.checks
        .filter((c) => c.count > 0)
        .map((check) => ({ name: brokerName(broker.kind), check })),
    ),
  ];
  if (failing.length === 0) lines.push('**No violation.**');
  else {
    lines.push(`**Violations: ${report.violations}.**`);
    lines.push('');
    for (const { name, check } of failing)
      lines.push(`- ${name}: \`${check.name}\` × ${check.count} — ${check.description}`);
  }
  return lines.join('\n');
}
