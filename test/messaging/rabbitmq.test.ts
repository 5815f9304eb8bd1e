import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import {
  consumeIdempotently,
  RabbitMqPublisher,
  UnroutableMessageError,
} from '../../src/messaging/brokers/rabbitmq.js';
import { Outbox, outboxStats } from '../../src/messaging/outbox/index.js';
import type { OutboxMessage } from '../../src/messaging/publisher.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { requireService, services } from '../support/services.js';
import { crashOneConsumer, startWorker, type Worker } from './support/children.js';
import { freshOutbox, testPool, until } from './support/pg.js';
import { acksOnlyWhatIsStored, outageInboxOptions } from './support/store-outage.js';

// Child processes start through tsx: on a loaded 2-core machine each start can take seconds.
vi.setConfig({ testTimeout: 120_000 });

const tag = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
let connection: ChannelModel;
let channel: Channel;
let pool: pg.Pool;
let redis: Redis;
const queues: string[] = [];
const workers: Worker[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

async function freshQueue(label: string): Promise<string> {
  const queue = `oncely_${label}_${tag}`;
  await channel.assertQueue(queue, { durable: true });
  queues.push(queue);
  return queue;
}

async function send(queue: string, messageId: string): Promise<void> {
  const confirm = await connection.createConfirmChannel();
  confirm.sendToQueue(queue, Buffer.from(messageId), { messageId, persistent: true });
  await confirm.waitForConfirms();
  await confirm.close();
}

async function freshEffects(label: string): Promise<string> {
  const table = `oncely_effects_${label}_${tag}`;
  await pool.query(`CREATE TABLE ${table} (id text NOT NULL, pid integer)`);
  cleanups.push(() => pool.query(`DROP TABLE IF EXISTS ${table}`));
  return table;
}

beforeAll(async () => {
  await requireService('rabbitmq');
  await requireService('postgres');
  await requireService('redis');
  connection = await amqp.connect(services.rabbitmq.url);
  channel = await connection.createChannel();
  pool = testPool(6);
  redis = new Redis({ port: services.redis.port });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  for (const queue of queues) await channel.deleteQueue(queue).catch(() => {});
  for (const cleanup of cleanups) await cleanup().catch(() => {});
  await connection?.close();
  await pool?.end();
  const keys = await redis.keys(`oncely-msg-${tag}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis?.disconnect();
});

const message = (id: string, topic: string): OutboxMessage => ({
  id,
  topic,
  key: 'k',
  payload: Buffer.from(JSON.stringify({ id })),
  contentType: 'application/json',
  headers: { traceparent: '00-1-2-01' },
  attempt: 1,
  createdAt: new Date(1_700_000_000_000),
});

describe('RabbitMqPublisher', () => {
  it('publishes persistent messages with message-id = outbox id through a confirm channel', async () => {
    const queue = await freshQueue('pub');
    const publisher = new RabbitMqPublisher({ channel: () => connection.createConfirmChannel() });
    await publisher.publish(message('42', queue));
    const got = await channel.get(queue, { noAck: true });
    if (got === false) throw new Error('the queue is empty');
    const { properties, content } = got;
    expect(properties).toMatchObject({
      messageId: '42',
      deliveryMode: 2,
      contentType: 'application/json',
      type: queue,
      timestamp: 1_700_000_000,
      headers: { traceparent: '00-1-2-01', 'oncely-key': 'k' },
    });
    expect(JSON.parse(content.toString())).toEqual({ id: '42' });
  });

  it('rejects a message no queue takes instead of letting the broker drop it', async () => {
    const publisher = new RabbitMqPublisher({ channel: await connection.createConfirmChannel() });
    await expect(publisher.publish(message('1', `oncely_nobody_${tag}`))).rejects.toBeInstanceOf(
      UnroutableMessageError,
    );
  });
});

describe('consumeIdempotently (RabbitMQ): acknowledgements and errors', () => {
  it('acks only what the store recorded: while complete fails or hangs the message is requeued, then processed once', async () => {
    const queue = await freshQueue('outage');
    const consumerChannel = await connection.createChannel();
    await acksOnlyWhatIsStored({
      start: (store, handler, onOutcome) =>
        consumeIdempotently(async () => handler(), {
          channel: consumerChannel,
          queue,
          store,
          maxRetryDelayMs: 100,
          onOutcome,
          ...outageInboxOptions,
        }),
      send: () => send(queue, 'outage-1'),
      drained: async () => (await channel.checkQueue(queue)).messageCount === 0,
    });
    // Had the consumer left the message unacknowledged, closing its channel would put it back in the queue.
    await consumerChannel.close();
    expect((await channel.checkQueue(queue)).messageCount).toBe(0);
  });

  it('a throwing onOutcome is reported and the consumer goes on; a closed channel is reported, not swallowed', async () => {
    const queue = await freshQueue('errors');
    const consumerChannel = await connection.createChannel();
    const reported: { error: unknown; operation: string }[] = [];
    const handled: string[] = [];
    let hookCalls = 0;
    const consumer = await consumeIdempotently(
      async (msg) => {
        handled.push(msg.properties.messageId);
        // Closing the channel under the consumer: acknowledging this message must fail.
        if (msg.properties.messageId === 'close-1') await consumerChannel.close();
      },
      {
        channel: consumerChannel,
        queue,
        store: new MemoryStore(),
        onOutcome: () => {
          if (++hookCalls === 1) throw new Error('metrics backend down');
        },
        onError: (error, operation) => reported.push({ error, operation }),
      },
    );
    try {
      await send(queue, 'hook-1');
      await until(() => reported.length === 1);
      expect(reported[0]).toMatchObject({ operation: 'onOutcome' });
      expect(String(reported[0]!.error)).toContain('metrics backend down');
      // The channel survived the hook (no nack of an acked message): the next message is handled and acked.
      await send(queue, 'hook-2');
      await until(() => handled.includes('hook-2') && hookCalls === 2);
      await until(async () => (await channel.checkQueue(queue)).messageCount === 0);

      await send(queue, 'close-1');
      await until(() => reported.length === 3);
      expect(reported.slice(1).map((r) => r.operation)).toEqual(['settle', 'requeue']);
      // The broker put the unacknowledged message back itself.
      await until(async () => (await channel.checkQueue(queue)).messageCount === 1);
    } finally {
      await consumer.stop().catch(() => {});
    }
  });
});

describe('relay to RabbitMQ (no broker dedup) with an inbox consumer', () => {
  it('SIGKILL a relay mid-batch, restart it: nothing lost, the queue holds duplicates, the inbox applies each effect once', async () => {
    const box = await freshOutbox(pool, 'rabbit');
    cleanups.push(box.drop);
    const queue = await freshQueue('relay');
    const effects = await freshEffects('relay');
    const outbox = new Outbox({ schema: box.schema });
    const total = 1_000;
    for (let chunk = 0; chunk < total / 100; chunk++) {
      await outbox.addMany(
        pool,
        Array.from({ length: 100 }, (_, i) => ({
          topic: queue,
          key: `k${i % 50}`,
          payload: { n: chunk * 100 + i },
        })),
      );
    }
    const config = { schema: box.schema, broker: 'rabbitmq', leaseMs: 2_000, batchSize: 100 };
    const victim = startWorker('relay', { ...config, stallAfter: 450 });
    workers.push(victim);
    await victim.waitFor((e) => e.type === 'stalled');
    await victim.kill('SIGKILL');
    const replacement = startWorker('relay', config);
    workers.push(replacement);
    await until(async () => (await outboxStats(pool, { schema: box.schema })).pending === 0, 60_000, 100);
    await replacement.kill('SIGTERM');

    const { messageCount } = await channel.checkQueue(queue);
    expect(messageCount).toBeGreaterThan(total);

    const deliveries = { processed: 0, duplicate: 0 };
    const consumerChannel = await connection.createChannel();
    const consumer = await consumeIdempotently(
      async (msg) => {
        await pool.query(`INSERT INTO ${effects} (id) VALUES ($1)`, [msg.properties.messageId]);
      },
      {
        channel: consumerChannel,
        queue,
        store: new RedisStore({ client: redis, prefix: `oncely-msg-${tag}-relay` }),
        onOutcome: (outcome) => {
          if (outcome.kind === 'processed' || outcome.kind === 'duplicate') deliveries[outcome.kind]++;
        },
      },
    );
    await until(() => deliveries.processed + deliveries.duplicate === messageCount, 60_000);
    await consumer.stop();
    await consumerChannel.close();
    expect(deliveries).toEqual({ processed: total, duplicate: messageCount - total });
    const { rows } = await pool.query(
      `SELECT count(*)::int AS applied, count(DISTINCT id)::int AS distinct_ids FROM ${effects}`,
    );
    expect(rows[0]).toEqual({ applied: total, distinct_ids: total });
  });
});

describe('consumeIdempotently (RabbitMQ) across processes', () => {
  it('every message delivered twice, a consumer SIGKILLed mid-handler and replaced: each effect exactly once', async () => {
    const queue = await freshQueue('consume');
    const effects = await freshEffects('consume');
    const total = 400;
    const confirm = await connection.createConfirmChannel();
    for (let i = 0; i < total; i++) {
      for (let copy = 0; copy < 2; copy++) {
        confirm.sendToQueue(queue, Buffer.from(String(i)), { messageId: `m-${i}`, persistent: true });
      }
    }
    await confirm.waitForConfirms();
    await confirm.close();

    const config = { queue, store: 'redis', prefix: `oncely-msg-${tag}-consume`, effects, leaseMs: 1_000 };
    // The victim takes one message at a time, so when it hangs in a handler (before the effect) nothing else of
    // it is between an effect and its stored outcome: that window is closed only by the transactional inbox.
    const { steady, replacement } = await crashOneConsumer(workers, config, { stallAt: 10, prefetch: 1 });

    await until(
      async () => {
        const { rows } = await pool.query(`SELECT count(DISTINCT id)::int AS n FROM ${effects}`);
        const { messageCount } = await channel.checkQueue(queue);
        return rows[0].n === total && messageCount === 0;
      },
      60_000,
      100,
    );
    await Promise.all([steady.kill('SIGTERM'), replacement.kill('SIGTERM')]);
    const { rows } = await pool.query(
      `SELECT count(*)::int AS applied, count(DISTINCT id)::int AS distinct_ids, count(DISTINCT pid)::int AS processes FROM ${effects}`,
    );
    expect(rows[0]).toMatchObject({ applied: total, distinct_ids: total });
    expect(rows[0].processes).toBeGreaterThanOrEqual(2);
    // The message the killed consumer held was taken over (attempt 2) once its lease ran out.
    const last = (w: Worker) => w.events.filter((e) => e.type === 'progress').at(-1);
    expect(
      Number(last(steady)?.takeovers ?? 0) + Number(last(replacement)?.takeovers ?? 0),
    ).toBeGreaterThanOrEqual(1);
  });
});
