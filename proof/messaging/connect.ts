// The broker side of the relay and consumer processes: connections made the way each broker page recommends
// (docs/messaging/*.md), kept alive across the faults the proof injects, and the library's publisher or consumer
// helper on top. The caller owns connections (oncely never dials), so reconnecting is this file's job, as it is
// an application's: NATS and ioredis reconnect by themselves; amqplib does not, so a lost RabbitMQ connection is
// replaced here and the consumer subscribes again.

import type { JsMsg } from '@nats-io/jetstream';
import { jetstream } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp, { type ChannelModel, type ConsumeMessage } from 'amqplib';
import { Redis } from 'ioredis';
import { consumeIdempotently as consumeNats, NatsPublisher } from '../../src/messaging/brokers/nats.js';
import {
  consumeIdempotently as consumeRabbit,
  RabbitMqPublisher,
} from '../../src/messaging/brokers/rabbitmq.js';
import {
  consumeIdempotently as consumeRedis,
  RedisStreamsPublisher,
  type StreamEntry,
} from '../../src/messaging/brokers/redis-streams.js';
import type { InboxHandler, InboxOptions, InboxOutcome } from '../../src/messaging/consumer.js';
import type { Publisher } from '../../src/messaging/publisher.js';
import type { BrokerConnection, EventPayload } from './types.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface BrokerPublisher {
  readonly publisher: Publisher;
  /** NATS: publishes the stream dropped as duplicates. */
  duplicates(): number;
  close(): Promise<void>;
}

const connectNats = (port: number) =>
  natsConnect({
    servers: `127.0.0.1:${port}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
    noAsyncTraces: true,
  });

/** An amqplib connection replaced whenever it closes; `onLost` hears of each loss. */
function rabbitConnection(url: string, onLost: () => void = () => {}) {
  let current: Promise<ChannelModel> | undefined;
  let closed = false;
  const get = (): Promise<ChannelModel> => {
    current ??= amqp.connect(url).then(
      (connection) => {
        connection.on('error', () => {});
        connection.once('close', () => {
          current = undefined;
          if (!closed) onLost();
        });
        return connection;
      },
      (error: unknown) => {
        current = undefined;
        throw error;
      },
    );
    return current;
  };
  return {
    get,
    async close() {
      closed = true;
      await (await current?.catch(() => undefined))?.close().catch(() => {});
    },
  };
}

export async function brokerPublisher(broker: BrokerConnection, timeoutMs: number): Promise<BrokerPublisher> {
  if (broker.kind === 'nats') {
    const nc = await connectNats(broker.port);
    const publisher = new NatsPublisher({ jetstream: jetstream(nc), timeoutMs });
    return { publisher, duplicates: () => publisher.duplicates, close: () => nc.close() };
  }
  if (broker.kind === 'rabbitmq') {
    const connection = rabbitConnection(broker.url);
    const publisher = new RabbitMqPublisher({
      // Called again after the channel closed: a new connection if the old one is gone (retried until it opens,
      // the relay's publish timeout bounding the wait).
      channel: async () => {
        for (;;) {
          try {
            return await (await connection.get()).createConfirmChannel();
          } catch {
            await sleep(100);
          }
        }
      },
      exchange: () => broker.exchange,
      routingKey: () => '',
    });
    return { publisher, duplicates: () => 0, close: () => connection.close() };
  }
  const client = new Redis({
    host: '127.0.0.1',
    port: broker.port,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 100,
  });
  client.on('error', () => {});
  return {
    publisher: new RedisStreamsPublisher({ client }),
    duplicates: () => 0,
    close: async () => client.disconnect(),
  };
}

/** The message id and the payload of a delivery, whatever the broker. */
export interface Delivery {
  readonly messageId: string;
  readonly payload: EventPayload;
}

export interface ConsumerHooks {
  readonly handler: (
    delivery: Delivery,
    context: Parameters<InboxHandler<unknown, unknown>>[1],
  ) => Promise<void>;
  readonly onOutcome: (outcome: InboxOutcome<unknown>, messageId: string) => void;
  readonly onError: (error: unknown, operation: string) => void;
}

export type InboxSettings = Omit<InboxOptions<unknown>, 'messageId' | 'onEvent'>;

/** Consumes the broker through the library's helper until `stop()`, subscribing again after a lost connection. */
export async function startConsumer(
  broker: BrokerConnection,
  inbox: InboxSettings,
  concurrency: number,
  hooks: ConsumerHooks,
): Promise<{ stop(): Promise<void> }> {
  const json = (bytes: Uint8Array) => JSON.parse(Buffer.from(bytes).toString('utf8')) as EventPayload;
  if (broker.kind === 'nats') {
    const nc = await connectNats(broker.port);
    const consumer = await jetstream(nc).consumers.get(broker.stream, broker.durable);
    const id = (message: JsMsg) => message.headers?.get('Nats-Msg-Id') ?? '';
    let running: { stop(): Promise<void> } | undefined;
    let stopped = false;
    const subscribe = async (): Promise<void> => {
      running = await consumeNats(
        (message, context) => hooks.handler({ messageId: id(message), payload: json(message.data) }, context),
        {
          ...inbox,
          consumer,
          concurrency,
          maxRetryDelayMs: 1_000,
          workingIntervalMs: Math.floor(broker.ackWaitMs / 3),
          onOutcome: (outcome, message) => hooks.onOutcome(outcome, id(message)),
          onError: (error, operation) => {
            hooks.onError(error, operation);
            // The pull subscription ended: nothing more is consumed from it; the helper says to start a new one.
            if (operation === 'consume' && !stopped) void sleep(200).then(subscribe);
          },
        },
      );
    };
    await subscribe();
    return {
      async stop() {
        stopped = true;
        await running?.stop();
        await nc.close();
      },
    };
  }
  if (broker.kind === 'rabbitmq') {
    let stopped = false;
    let running: { stop(): Promise<void> } | undefined;
    const id = (message: ConsumeMessage) => String(message.properties.messageId ?? '');
    const subscribe = async (): Promise<void> => {
      for (;;) {
        if (stopped) return;
        try {
          const channel = await (await connection.get()).createChannel();
          channel.on('error', () => {});
          running = await consumeRabbit(
            (message, context) =>
              hooks.handler({ messageId: id(message), payload: json(message.content) }, context),
            {
              ...inbox,
              channel,
              queue: broker.queue,
              prefetch: concurrency,
              maxRetryDelayMs: 1_000,
              onOutcome: (outcome, message) => hooks.onOutcome(outcome, id(message)),
              onError: hooks.onError,
            },
          );
          return;
        } catch (error) {
          hooks.onError(error, 'subscribe');
          await sleep(200);
        }
      }
    };
    const connection = rabbitConnection(broker.url, () => void sleep(100).then(subscribe));
    await subscribe();
    return {
      async stop() {
        stopped = true;
        await running?.stop().catch(() => {});
        await connection.close();
      },
    };
  }
  const client = new Redis({
    host: '127.0.0.1',
    port: broker.port,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 100,
    lazyConnect: true,
  });
  client.on('error', () => {});
  const id = (entry: StreamEntry) => entry.id;
  const running = await consumeRedis(
    (entry, context) => hooks.handler({ messageId: id(entry), payload: json(entry.payload) }, context),
    {
      ...inbox,
      client,
      stream: broker.stream,
      group: broker.group,
      count: concurrency,
      blockMs: 500,
      claimIdleMs: broker.claimIdleMs,
      onOutcome: (outcome, entry) => hooks.onOutcome(outcome, id(entry)),
      onError: hooks.onError,
    },
  );
  return {
    async stop() {
      await running.stop();
      client.disconnect();
    },
  };
}
