// The messaging part of the markdown report (proof/report.ts writes the rest, and calls these).
import type { BrokerReport, MessagingSettings } from './settings.js';
import type { BrokerKind } from './types.js';

const n = (value: number) => value.toLocaleString('en-US');
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const BROKER_NAMES: Record<BrokerKind, string> = {
  nats: 'NATS JetStream',
  rabbitmq: 'RabbitMQ',
  'redis-streams': 'Redis Streams',
};

export const brokerName = (kind: BrokerKind) => BROKER_NAMES[kind];

/** What the broker run's faults were, in one cell: "2 relay kills, 2 consumer kills, …". */
function faultSummary(report: BrokerReport): string {
  const counts = new Map<string, number>();
  for (const fault of report.faults) counts.set(fault.name, (counts.get(fault.name) ?? 0) + 1);
  return [...counts].map(([name, count]) => `${name} × ${count}`).join(', ');
}

/** Duplicates the system removed on the way: the broker's dedup, and the inbox's. */
function duplicates(report: BrokerReport): string {
  const atBroker = report.result.brokerCopies - report.result.brokerEvents;
  const parts = [
    report.kind === 'nats'
      ? `${n(report.relays.duplicates)} dropped by the stream (\`Nats-Msg-Id\`)`
      : undefined,
    `${n(atBroker)} extra copies at the broker`,
    `${n(report.consumers.duplicate)} deliveries the inbox found done`,
  ];
  return parts.filter((part) => part !== undefined).join(', ');
}

export function messagingSettingsLine(settings: MessagingSettings): string {
  return `Per broker: ${n(settings.events)} committed events over ${n(settings.keys)} keys from ${settings.producerConnections} concurrent writers (1–${settings.maxPerTransaction} events per transaction, ${(settings.rollbackRate * 100).toFixed(0)}% rolled back), ${settings.relays} relay processes (batch ${n(settings.batchSize)}, lease ${n(settings.relayLeaseMs)} ms), ${settings.consumers} consumer processes × ${settings.consumerConcurrency} messages in flight through a transactional PostgreSQL inbox (lease ${n(settings.inboxLeaseMs)} ms).`;
}

export function messagingMarkdown(reports: readonly BrokerReport[], settings: MessagingSettings): string[] {
  if (reports.length === 0) return [];
  const lines: string[] = [
    '',
    '## Messaging: outbox → relay → broker → inbox',
    '',
    messagingSettingsLine(settings),
    '',
  ];
  lines.push(
    '| broker | events (+ rolled back) | keys | events/s | write → effect p50 | p99 | faults | duplicates removed | violations | time |',
  );
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |');
  for (const report of reports) {
    lines.push(
      `| ${brokerName(report.kind)} | ${n(report.committed)} (+${n(report.rolledBack)}) | ${n(report.result.keys)} | ${n(report.throughput)} | ${n(report.latencyMs.p50)} ms | ${n(report.latencyMs.p99)} ms | ${report.faults.length} | ${duplicates(report)} | ${report.result.violations} | ${s(report.durationMs)} |`,
    );
  }
  for (const report of reports) {
    const { relays, consumers } = report;
    lines.push('', `### ${brokerName(report.kind)}`, '');
    lines.push(
      `${n(report.committed)} events committed and ${n(report.rolledBack)} rolled back in ${s(report.loadMs)}; ${n(report.result.brokerCopies)} copies at the broker of ${n(report.result.brokerEvents)} events; ${n(report.result.effects)} effects. Relays (${report.processes.relays} processes over the run): ${n(relays.published)} marked published, ${n(relays.failed)} failed publishes retried, ${n(relays.outages)} outage pauses, ${n(relays.fenced)} fenced, ${n(relays.deadLettered)} dead-lettered. Consumers (${report.processes.consumers} processes): ${n(consumers.processed)} processed (${n(consumers.retried)} on a redelivery), ${n(consumers.duplicate)} duplicates, ${n(consumers.waits)} runs that waited for their key's previous event, ${n(consumers.busy)} busy, ${n(consumers.parked)} parked. Write → effect latency p50 ${n(report.latencyMs.p50)} ms, p99 ${n(report.latencyMs.p99)} ms, max ${n(report.latencyMs.max)} ms. CPU of the run's processes: producer ${s(report.cpuMs.producer)}, relays ${s(report.cpuMs.relays)}, consumers ${s(report.cpuMs.consumers)} (the broker's and PostgreSQL's not counted).`,
    );
    lines.push('', '| fault | at | what | lasted |', '| --- | ---: | --- | ---: |');
    for (const fault of report.faults)
      lines.push(
        `| ${fault.name} | ${(fault.at * 100).toFixed(0)}% | ${fault.detail} | ${n(fault.endedAt - fault.startedAt)} ms |`,
      );
    lines.push('', '| check | violations |', '| --- | ---: |');
    for (const check of report.result.checks) lines.push(`| ${check.description} | ${check.count} |`);
    for (const note of report.result.notes) lines.push('', `Note: ${note}.`);
    for (const check of report.result.checks.filter((c) => c.count > 0)) {
      lines.push('', `#### ${check.name}: ${check.count}`, '', '```json');
      for (const example of check.examples) lines.push(JSON.stringify(example));
      lines.push('```');
    }
  }
  return lines;
}

/** The messaging rows of docs/guarantees.md's "last proof run" section. */
export function messagingGuarantees(reports: readonly BrokerReport[], settings: MessagingSettings): string[] {
  if (reports.length === 0) return [];
  const lines = ['', messagingSettingsLine(settings), ''];
  lines.push(
    '| broker | events committed (+ rolled back) | keys | faults injected | events/s | write → effect p50 / p99 | duplicates removed | violations |',
  );
  lines.push('| --- | ---: | ---: | --- | ---: | ---: | --- | ---: |');
  for (const report of reports)
    lines.push(
      `| ${brokerName(report.kind)} | ${n(report.committed)} (+${n(report.rolledBack)}) | ${n(report.result.keys)} | ${faultSummary(report)} | ${n(report.throughput)} | ${n(report.latencyMs.p50)} / ${n(report.latencyMs.p99)} ms | ${duplicates(report)} | **${report.result.violations}** |`,
    );
  return lines;
}
