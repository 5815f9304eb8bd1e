/**
 * @module The options every broker consumer shares (the hooks, the message id, the inbox's own), checked alike by
 * each: `consumeIdempotently` of RabbitMQ, NATS JetStream and Redis Streams, each given a real channel, pull
 * consumer or client, refuses a hook that is not a function and a misspelled option before it consumes anything.
 */
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import amqp, { type ChannelModel } from 'amqplib';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, MemoryStore } from '../../src/index.js';
import * as nats from '../../src/messaging/brokers/nats.js';
import * as rabbitmq from '../../src/messaging/brokers/rabbitmq.js';
import * as redisStreams from '../../src/messaging/brokers/redis-streams.js';
import { requireService, services } from '../support/services.js';
import { freshStream, natsConnect } from './support/nats.js';

let nc: NatsConnection;
let stream: Awaited<ReturnType<typeof freshStream>>;
let amqpConnection: ChannelModel;
let redis: Redis;
// Named per run: were a guard broken, the consumer would start for real and leave these behind for afterAll.
const queue = `oncely_options_${process.pid}`;
const streamKey = `oncely:options:${process.pid}`;

beforeAll(async () => {
  await Promise.all([requireService('nats'), requireService('rabbitmq'), requireService('redis')]);
  nc = await natsConnect();
  stream = await freshStream(nc, 'options');
  amqpConnection = await amqp.connect(services.rabbitmq.url);
  const setup = await amqpConnection.createChannel();
  await setup.assertQueue(queue, { autoDelete: false });
  await setup.close();
  // Never connected: every case is refused before the consumer sends a command.
  redis = new Redis(services.redis.url, { lazyConnect: true });
});

afterAll(async () => {
  await stream?.drop();
  await nc?.close();
  const teardown = await amqpConnection?.createChannel();
  await teardown?.deleteQueue(queue);
  await amqpConnection?.close();
  if (redis?.status === 'ready') await redis.del(streamKey);
  redis?.disconnect();
});

const handler = async () => 'done';

/** Starts each broker's consumer with its own required options plus `extra`; the consumer is stopped if it runs. */
const brokers: Record<string, (extra: object) => Promise<unknown>> = {
  rabbitmq: async (extra) => {
    const channel = await amqpConnection.createChannel();
    try {
      const consumer = await rabbitmq.consumeIdempotently(handler, {
        channel,
        queue,
        store: new MemoryStore(),
        ...extra,
      });
      await consumer.stop();
    } finally {
      await channel.close().catch(() => undefined);
    }
  },
  nats: async (extra) => {
    const consumer = await nats.consumeIdempotently(handler, {
      consumer: await jetstream(nc).consumers.get(stream.name, 'test'),
      store: new MemoryStore(),
      ...extra,
    });
    await consumer.stop();
  },
  'redis-streams': async (extra) => {
    const consumer = await redisStreams.consumeIdempotently(handler, {
      client: redis,
      stream: streamKey,
      group: 'options',
      store: new MemoryStore(),
      ...extra,
    });
    await consumer.stop();
  },
};

describe.each(Object.entries(brokers))('consumeIdempotently (%s): the shared options', (_name, start) => {
  it('refuses an onOutcome that is not a function', async () => {
    const refused = start({ onOutcome: 'log it' });
    await expect(refused).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(refused).rejects.toThrow(/onOutcome/);
  });

  it('refuses an onError that is not a function', async () => {
    const refused = start({ onError: 42 });
    await expect(refused).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(refused).rejects.toThrow(/onError/);
  });

  it('refuses a misspelled option, which the inbox would otherwise ignore', async () => {
    await expect(start({ maxAtempts: 3 })).rejects.toThrow(/maxAtempts/);
  });

  it('refuses a messageId that is not a function', async () => {
    await expect(start({ messageId: 'id' })).rejects.toThrow(/messageId/);
  });
});
