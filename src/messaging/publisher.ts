/**
 * @module What the outbox relay hands a broker, and the small interface a broker implements. NATS JetStream,
 * RabbitMQ and Redis Streams ship with oncely (`oncely/nats`, `oncely/rabbitmq`, `oncely/redis-streams`); Kafka,
 * SQS or anything else is one object with a `publish` method.
 */
// This file's declarations use AbortSignal: the directive, kept in its .d.ts, loads it from @types/node for Node
// projects without the DOM lib whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />

/** One outbox row on its way to a broker. */
export interface OutboxMessage {
  /**
   * The outbox row's id (with the relay's `idPrefix`): stable across every retry of this row, so brokers use it as
   * their deduplication id (`Nats-Msg-Id`, AMQP `message-id`, a Redis Streams field).
   */
  readonly id: string;
  readonly topic: string;
  /** Ordering key: the relay publishes the messages of one key one at a time, in order. Null means unordered. */
  readonly key: string | null;
  readonly payload: Uint8Array;
  /** `application/json` for JSON payloads, `application/octet-stream` (or the caller's type) for bytes. */
  readonly contentType: string;
  /** The caller's headers plus the saved trace context (`traceparent`, `tracestate`). */
  readonly headers: Readonly<Record<string, string>>;
  /** 1 for the first publish attempt; higher on retries (and after a relay crash). */
  readonly attempt: number;
  /** When the row was written (database clock). */
  readonly createdAt: Date;
}

/**
 * A broker target. `publish` must resolve only once the broker has durably accepted the message (a JetStream
 * PubAck, a RabbitMQ publisher confirm, a Redis reply) and reject otherwise: the relay marks a row published only
 * after `publish` resolved, and retries it (with the same `id`) when it rejected or timed out.
 *
 * @example
 * // Kafka with kafkajs: idempotent producer, key for partition order, the outbox id as a header for consumers.
 * const kafka: Publisher = {
 *   name: 'kafka',
 *   delivery: 'at-least-once',
 *   async publish(message) {
 *     await producer.send({
 *       topic: message.topic,
 *       acks: -1,
 *       messages: [{ key: message.key, value: Buffer.from(message.payload), headers: { ...message.headers, 'oncely-id': message.id } }],
 *     });
 *   },
 * };
 */
export interface Publisher {
  /** Short name for logs and events (`nats`, `rabbitmq`, `redis-streams`). */
  readonly name: string;
  /**
   * `at-least-once` when a resolved `publish` means the broker keeps the message; `at-most-once` for fire-and-forget
   * channels (Redis pub/sub), which the relay accepts only when told so explicitly.
   */
  readonly delivery: 'at-least-once' | 'at-most-once';
  /** Publishes one message. `signal` aborts when the relay's publish timeout passes or it shuts down. */
  publish(message: OutboxMessage, signal: AbortSignal): Promise<void>;
  /**
   * Optional: called once when a relay starts, with the longest time between the first and the last publish of
   * one message (`retryHorizonMs`), so a broker can check its deduplication window covers it.
   */
  prepare?(context: PublisherContext): Promise<void>;
}

export interface PublisherContext {
  /** Longest time, in ms, from a message's first publish attempt to its last retry. */
  readonly retryHorizonMs: number;
  /** Reports a misconfiguration that does not stop the relay. */
  readonly warn: (message: string) => void;
}
