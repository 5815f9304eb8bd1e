// A relay in a process of its own, for the storm and crash tests. Config (ONCELY_WORKER): schema, broker
// ('nats' | 'rabbitmq' | 'redis' | 'bullmq'), target names, lease and batch size, and `stallAfter`: after that many confirmed
// publishes, report "stalled" and hang mid-batch so the test can SIGKILL the process there.
import { jetstream } from '@nats-io/jetstream';
import amqp from 'amqplib';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { BullMqPublisher } from '../../../src/messaging/brokers/bullmq.js';
import { NatsPublisher } from '../../../src/messaging/brokers/nats.js';
import { RabbitMqPublisher } from '../../../src/messaging/brokers/rabbitmq.js';
import { RedisStreamsPublisher } from '../../../src/messaging/brokers/redis-streams.js';
import { OutboxRelay } from '../../../src/messaging/outbox/index.js';
import type { Publisher } from '../../../src/messaging/publisher.js';
import { services } from '../../support/services.js';
import { report } from '../support/children.js';
import { natsConnect } from '../support/nats.js';

interface Config {
  readonly schema: string;
  readonly broker: 'nats' | 'rabbitmq' | 'redis' | 'bullmq';
  /** bullmq: the queue's name and its Redis prefix. */
  readonly queue?: string;
  readonly queuePrefix?: string;
  readonly natsPort?: number;
  readonly redisPort?: number;
  readonly stream?: string;
  readonly leaseMs: number;
  readonly batchSize: number;
  readonly stallAfter?: number;
}

const config = JSON.parse(process.env.ONCELY_WORKER!) as Config;
const closers: (() => Promise<unknown>)[] = [];

let duplicates = () => 0;

async function brokerPublisher(): Promise<Publisher> {
  if (config.broker === 'nats') {
    const nc = await natsConnect(config.natsPort);
    closers.push(() => nc.close());
    const nats = new NatsPublisher({ jetstream: jetstream(nc) });
    duplicates = () => nats.duplicates;
    return nats;
  }
  if (config.broker === 'rabbitmq') {
    const connection = await amqp.connect(services.rabbitmq.url);
    closers.push(() => connection.close());
    return new RabbitMqPublisher({ channel: () => connection.createConfirmChannel() });
  }
  if (config.broker === 'bullmq') {
    const queue = new Queue(config.queue!, {
      connection: { port: config.redisPort ?? services.redis.port, maxRetriesPerRequest: 1 },
      prefix: config.queuePrefix!,
      defaultJobOptions: { attempts: 3, removeOnComplete: { age: 3_600 }, removeOnFail: { age: 3_600 } },
    });
    closers.push(() => queue.close());
    return new BullMqPublisher({ queue });
  }
  const redis = new Redis({ port: config.redisPort ?? services.redis.port, maxRetriesPerRequest: 1 });
  closers.push(() => redis.quit());
  return new RedisStreamsPublisher({ client: redis, stream: () => config.stream! });
}

function stalling(inner: Publisher, after: number): Publisher {
  let confirmed = 0;
  return {
    name: inner.name,
    delivery: inner.delivery,
    prepare: async (context) => inner.prepare?.(context),
    // From the `after`-th confirmation on, the broker has the message but the relay never hears back: the batch
    // hangs half published and unmarked, as when the process dies between the broker's ack and the mark.
    async publish(message, signal) {
      if (confirmed >= after) return new Promise<void>(() => {});
      await inner.publish(message, signal);
      if (++confirmed === after) report({ type: 'stalled', pid: process.pid });
      if (confirmed >= after) return new Promise<void>(() => {});
    },
  };
}

const pool = new pg.Pool({ connectionString: services.postgres.url, max: 3 });
pool.on('error', () => {});
const base = await brokerPublisher();
const publisher = config.stallAfter === undefined ? base : stalling(base, config.stallAfter);
let published = 0;
const relay = new OutboxRelay({
  pool,
  publisher,
  schema: config.schema,
  leaseMs: config.leaseMs,
  publishTimeoutMs: Math.floor(config.leaseMs / 2),
  batchSize: config.batchSize,
  onEvent: (event) => {
    if (event.type === 'published') published += event.count;
    else if (event.type !== 'failed')
      report(event.type === 'error' ? { type: 'error', message: String(event.error) } : event);
  },
});
await relay.start();
report({ type: 'ready', pid: process.pid });
const progress = setInterval(() => report({ type: 'progress', published, duplicates: duplicates() }), 250);

process.once('SIGTERM', async () => {
  clearInterval(progress);
  await relay.stop({ timeoutMs: 5_000 });
  report({ type: 'progress', published, duplicates: duplicates() });
  await pool.end();
  for (const close of closers) await close().catch(() => {});
  process.exit(0);
});
