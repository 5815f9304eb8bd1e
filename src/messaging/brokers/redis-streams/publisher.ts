/**
 * @module The Redis Streams publishers: `RedisStreamsPublisher` for the outbox relay (XADD, the outbox id in
 * `oncely-id` for the consumer's inbox to deduplicate on) and `RedisPubSubNotifier`, an explicitly at-most-once
 * notifier over pub/sub.
 */
import type { Cluster, Redis } from 'ioredis';
import { InvalidOptionsError } from '../../../core/errors.js';
import { knownOptions, optionalFunction, wholeNumber } from '../../../core/validate.js';
import type { OutboxMessage, Publisher } from '../../publisher.js';
import { entryFields } from './fields.js';

export interface RedisStreamsPublisherOptions {
  /** The caller's ioredis client (standalone or Cluster). */
  readonly client: Redis | Cluster;
  /** The stream key of a message. Default: its topic. */
  readonly stream?: (message: OutboxMessage) => string;
  /** Trim each stream to about this many entries (`XADD … MAXLEN ~ n`). Default: no trimming. */
  readonly maxLength?: number;
}

/**
 * Appends each message to a Redis stream with `XADD`, the outbox id in the `oncely-id` field. Redis does not
 * deduplicate: a retried publish can add a second entry, which the consumer's inbox (keyed on `oncely-id`) drops.
 *
 * @example
 * const publisher = new RedisStreamsPublisher({ client: redis, stream: (m) => `events:${m.topic}` });
 */
export class RedisStreamsPublisher implements Publisher {
  readonly name = 'redis-streams';
  readonly delivery = 'at-least-once' as const;
  readonly #client: Redis | Cluster;
  readonly #stream: (message: OutboxMessage) => string;
  readonly #trim: (string | number)[];

  constructor(options: RedisStreamsPublisherOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('RedisStreamsPublisher: options are required');
    }
    knownOptions('RedisStreamsPublisher', options, ['client', 'stream', 'maxLength']);
    if (options.client === null || typeof options.client?.xadd !== 'function') {
      throw new InvalidOptionsError('client must be an ioredis client');
    }
    optionalFunction('stream', options.stream);
    this.#client = options.client;
    this.#stream = options.stream ?? ((message) => message.topic);
    const maxLength =
      options.maxLength === undefined
        ? undefined
        : wholeNumber('maxLength', options.maxLength, 0, { min: 1 });
    this.#trim = maxLength === undefined ? [] : ['MAXLEN', '~', maxLength];
  }

  async publish(message: OutboxMessage): Promise<void> {
    await this.#client.xadd(this.#stream(message), ...this.#trim, '*', ...entryFields(message));
  }
}

export interface RedisPubSubNotifierOptions {
  readonly client: Redis | Cluster;
  /** The channel of a message. Default: its topic. */
  readonly channel?: (message: OutboxMessage) => string;
}

/**
 * At-most-once: `PUBLISH`es the payload to a channel. Subscribers that are not connected at that moment never
 * see it, and nothing is retried, so this is a wake-up or cache-invalidation signal, never the way to deliver
 * an event. The relay refuses it unless created with `acceptAtMostOnce: true`.
 */
export class RedisPubSubNotifier implements Publisher {
  readonly name = 'redis-pubsub';
  readonly delivery = 'at-most-once' as const;
  readonly #client: Redis | Cluster;
  readonly #channel: (message: OutboxMessage) => string;

  constructor(options: RedisPubSubNotifierOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('RedisPubSubNotifier: options are required');
    }
    knownOptions('RedisPubSubNotifier', options, ['client', 'channel']);
    if (options.client === null || typeof options.client?.publish !== 'function') {
      throw new InvalidOptionsError('client must be an ioredis client');
    }
    optionalFunction('channel', options.channel);
    this.#client = options.client;
    this.#channel = options.channel ?? ((message) => message.topic);
  }

  async publish(message: OutboxMessage): Promise<void> {
    const { payload } = message;
    await this.#client.publish(
      this.#channel(message),
      Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength),
    );
  }
}
