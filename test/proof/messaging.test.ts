import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runMessaging } from '../../proof/messaging/harness.js';
import { brokerName, messagingMarkdown } from '../../proof/messaging/report.js';
import type { BrokerReport } from '../../proof/messaging/settings.js';
import { MESSAGING_SHORT } from '../../proof/profiles.js';
import { requireService } from '../support/services.js';

// The short version of the messaging phase of `npm run proof` (docs/guarantees.md): the same harness, small
// sizes, the three brokers at once. Per broker a producer process commits events in business transactions,
// relay processes publish them through a fault proxy, consumer processes apply them through a transactional
// PostgreSQL inbox into an append-only effect ledger; a relay is SIGKILLed mid-batch, a consumer mid-handler, the
// broker fails (its own nats-server and redis-server are SIGKILLed and restarted; the shared RabbitMQ's
// connections are reset at the proxy), and a partition holds every connection; the checker decides. The report
// lands in .tmp/proof/.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const settings = MESSAGING_SHORT;
let reports: BrokerReport[];

beforeAll(async () => {
  await requireService('postgres');
  await requireService('rabbitmq');
  const outDir = join(ROOT, '.tmp/proof');
  mkdirSync(outDir, { recursive: true });
  const runId = Math.random().toString(16).slice(2, 8);
  reports = await runMessaging(settings, { runId, outDir: join(outDir, 'runs'), keep: false, log: () => {} });
  writeFileSync(join(outDir, `messaging-short-${runId}.json`), `${JSON.stringify(reports, null, 2)}\n`);
  writeFileSync(join(outDir, `messaging-short-${runId}.md`), messagingMarkdown(reports, settings).join('\n'));
}, 120_000);

describe('the proof, short: exactly-once effects through outbox, relay, broker and inbox under injected faults', () => {
  for (const kind of settings.brokers) {
    it(`${brokerName(kind)}: every committed event applied once, in commit order per key`, () => {
      const report = reports.find((candidate) => candidate.kind === kind)!;
      expect(report.faults.length, 'every fault of the plan was injected').toBe(settings.faults.length);
      expect(report.committed).toBeGreaterThanOrEqual(settings.events);
      expect(report.rolledBack, 'some transactions rolled back').toBeGreaterThan(0);
      const failing = report.result.checks
        .filter((check) => check.count > 0)
        .map((check) => `${check.name}: ${check.count} ${JSON.stringify(check.examples.slice(0, 2))}`);
      expect(failing, 'violations (report in .tmp/proof/messaging-short-*.md)').toEqual([]);
    });
  }
});
