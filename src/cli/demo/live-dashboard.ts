/**
 * @module The demo's live dashboard: the payments service under steady traffic with an event log, shown on the
 * dashboard page.
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import type { Store } from '../../core/store.js';
import { EventLog } from '../../dashboard/events/log.js';
import { startDashboardServer } from '../dashboard-server.js';
import { DEMO_SCHEMA } from './location.js';
import { loadPaymentsServer } from './payments-server.js';
import { startDemoRelay } from './relay.js';
import { runStorm } from './storm.js';

export interface LiveDashboardOptions {
  readonly store: Store;
  readonly pool: Pool;
  readonly description: string;
  readonly port: number;
  readonly processingMs: number;
}

const ROUND_MS = 1_000;

/**
 * `oncely demo --store postgres --dashboard`: the payments service under steady traffic (a small storm of
 * duplicates every second), its engine's events in an EventLog, its outbox relayed to a demo broker that refuses
 * payments of an amount ending in 13 (so retries and dead letters appear), and the dashboard with actions on.
 * Runs until Ctrl-C; `stop` is what the signal handler calls.
 */
export async function runLiveDashboard(
  options: LiveDashboardOptions,
): Promise<{ stop: () => Promise<void> }> {
  const { store, pool, processingMs } = options;
  // Everything in the demo's own schema: the keys (opened there by the command), the event log and the outbox.
  const source = { postgres: pool, schema: DEMO_SCHEMA };
  const log = new EventLog({ source, flushMs: 1_000 });
  await log.migrate();
  const { startPaymentsServer } = await loadPaymentsServer();
  const payments = await startPaymentsServer({
    store,
    postgres: { pool, schema: DEMO_SCHEMA },
    processingMs,
    onEvent: log.onEvent,
  });
  const relay = await startDemoRelay(pool, () => {}, {
    maxAttempts: 3,
    refuse: (message) => {
      const { amount } = JSON.parse(Buffer.from(message.payload).toString('utf8')) as { amount?: number };
      return amount !== undefined && amount % 100 === 13
        ? `demo broker: payments of an amount ending in 13 are refused (amount ${amount})`
        : undefined;
    },
  });
  const token = process.env.ONCELY_DASHBOARD_TOKEN || randomBytes(24).toString('base64url');
  const board = await startDashboardServer({
    source,
    host: '127.0.0.1',
    port: options.port,
    token,
    actions: true,
  });
  process.stdout.write(
    `oncely dashboard on ${board.url} (store: ${options.description}); Ctrl-C stops it.\n` +
      `Traffic: every second, 3 new payments, each sent by 5 concurrent clients, to ${payments.url}/payments.\n` +
      'The demo broker refuses payments of an amount ending in 13: they retry, then become dead letters to replay or discard.\n',
  );
  let running = true;
  const traffic = (async () => {
    while (running) {
      const started = Date.now();
      // One amount per key: its duplicates send the same body, as a retrying client does.
      const amounts = [0, 1, 2].map(() => 1_000 + Math.floor(Math.random() * 1_000));
      await runStorm({
        url: payments.url,
        keys: 3,
        duplicates: 5,
        amountFor: (index) => amounts[index] ?? 1_000,
      }).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, ROUND_MS - (Date.now() - started))));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await traffic;
      await board.close();
      await payments.close();
      await relay.stop({ timeoutMs: 5_000 });
      await log.close().catch(() => {});
    },
  };
}
