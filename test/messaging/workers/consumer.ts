// An idempotent RabbitMQ consumer in a process of its own. Config (ONCELY_WORKER):
// - store: 'redis' (key prefix `prefix`) or 'postgres-tx' (a transactional PostgresStore in `schema`: the effect is
//   written through the inbox's transaction);
// - stallAt: the handler run that reports "stalled" and hangs, before its effect ('redis') or after writing it
//   inside the transaction ('postgres-tx'), so the test can SIGKILL the process mid-handler;
// - crashOn: a message id whose handler kills its own process (a message that keeps crashing its consumer).
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Store } from '../../../src/core/store.js';
import { consumeIdempotently } from '../../../src/messaging/brokers/rabbitmq.js';
import { PostgresStore, transactionOf } from '../../../src/stores/postgres/index.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { services } from '../../support/services.js';
import { report } from '../support/children.js';

interface Config {
  readonly queue: string;
  readonly store: 'redis' | 'postgres-tx';
  readonly prefix?: string;
  readonly schema?: string;
  readonly effects: string;
  readonly leaseMs: number;
  readonly maxAttempts?: number;
  readonly stallAt?: number;
  readonly crashOn?: string;
  readonly prefetch?: number;
}

const config = JSON.parse(process.env.ONCELY_WORKER!) as Config;
const pool = new pg.Pool({ connectionString: services.postgres.url, max: 6 });
pool.on('error', () => {});
let redis: Redis | undefined;
let store: Store;
if (config.store === 'redis') {
  redis = new Redis({ port: services.redis.port, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  await new Promise((resolve) => redis!.once('ready', resolve));
  store = new RedisStore({ client: redis, prefix: config.prefix! });
} else {
  store = new PostgresStore({ pool, schema: config.schema! }).transactional();
}
const connection = await amqp.connect(services.rabbitmq.url);
const channel = await connection.createChannel();

const hang = () => new Promise<never>(() => {});
let started = 0;
const counts = { processed: 0, duplicates: 0, takeovers: 0, parked: 0 };
const consumer = await consumeIdempotently(
  async (message, context) => {
    const id = message.properties.messageId;
    const run = ++started;
    if (id === config.crashOn) {
      report({ type: 'crashing', id, attempt: context.attempt });
      process.kill(process.pid, 'SIGKILL');
      await hang();
    }
    const stall = run === config.stallAt;
    if (stall && config.store === 'redis') {
      report({ type: 'stalled', pid: process.pid });
      await hang();
    }
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
    const db = config.store === 'postgres-tx' ? transactionOf(context) : pool;
    await db.query(`INSERT INTO ${config.effects} (id, pid) VALUES ($1, $2)`, [id, process.pid]);
    if (stall) {
      report({ type: 'stalled', pid: process.pid });
      await hang();
    }
  },
  {
    channel,
    queue: config.queue,
    store,
    leaseMs: config.leaseMs,
    maxAttempts: config.maxAttempts ?? 5,
    prefetch: config.prefetch ?? 20,
    maxRetryDelayMs: 200,
    onOutcome: (outcome, message) => {
      if (process.env.ONCELY_DEBUG)
        report({
          type: 'outcome',
          kind: outcome.kind,
          id: message.properties.messageId,
          error: outcome.kind === 'failed' ? String(outcome.error) : undefined,
        });
      if (outcome.kind === 'processed') counts.processed++;
      if (outcome.kind === 'processed' && outcome.attempt > 1) counts.takeovers++;
      if (outcome.kind === 'duplicate') counts.duplicates++;
      if (outcome.kind === 'parked') counts.parked++;
    },
  },
);
report({ type: 'ready', pid: process.pid });
const progress = setInterval(() => report({ type: 'progress', ...counts }), 250);

process.once('SIGTERM', async () => {
  clearInterval(progress);
  await consumer.stop();
  report({ type: 'progress', ...counts });
  await channel.close();
  await connection.close();
  await pool.end();
  redis?.disconnect();
  process.exit(0);
});
