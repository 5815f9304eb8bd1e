// A relay on MySQL / MariaDB in a process of its own, publishing to Redis Streams, for the crash test. Config
// (ONCELY_WORKER): driver, schema, stream, lease and batch size, and `stallAfter`: after that many confirmed
// publishes, report "stalled" and hang mid-batch so the test can SIGKILL the process there.
import { Redis } from 'ioredis';
import { RedisStreamsPublisher } from '../../../../src/messaging/brokers/redis-streams.js';
import { OutboxRelay } from '../../../../src/messaging/outbox/index.js';
import type { Publisher } from '../../../../src/messaging/publisher.js';
import { createPool, type DriverName } from '../../../mysql/support.js';
import { services } from '../../../support/services.js';
import { report } from '../../support/children.js';

interface Config {
  readonly driver: DriverName;
  readonly schema: string;
  readonly stream: string;
  readonly leaseMs: number;
  readonly batchSize: number;
  readonly stallAfter?: number;
}

const config = JSON.parse(process.env.ONCELY_WORKER!) as Config;

function stalling(inner: Publisher, after: number): Publisher {
  let confirmed = 0;
  return {
    name: inner.name,
    delivery: inner.delivery,
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

const pool = createPool(config.driver, { size: 3 });
const redis = new Redis({ port: services.redis.port, maxRetriesPerRequest: 1 });
const base = new RedisStreamsPublisher({ client: redis, stream: () => config.stream });
const publisher = config.stallAfter === undefined ? base : stalling(base, config.stallAfter);
let published = 0;
const relay = new OutboxRelay({
  pool,
  publisher,
  schema: config.schema,
  leaseMs: config.leaseMs,
  publishTimeoutMs: Math.floor(config.leaseMs / 2),
  batchSize: config.batchSize,
  minPollMs: 5,
  maxPollMs: 100,
  onEvent: (event) => {
    if (event.type === 'published') published += event.count;
    else if (event.type === 'error') report({ type: 'error', message: String(event.error) });
  },
});
await relay.start();
report({ type: 'ready', pid: process.pid });
const progress = setInterval(() => report({ type: 'progress', published }), 250);

process.once('SIGTERM', async () => {
  clearInterval(progress);
  await relay.stop({ timeoutMs: 5_000 });
  report({ type: 'progress', published });
  await pool.end();
  redis.disconnect();
  process.exit(0);
});
