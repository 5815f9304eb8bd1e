/**
 * @module `oncely/redis-streams`: Redis Streams publisher for the outbox relay (XADD, the outbox id in `oncely-id`),
 * an idempotent consumer-group helper (XREADGROUP / XACK / XAUTOCLAIM), and an explicitly at-most-once pub/sub
 * notifier. Needs `ioredis`.
 */

export {
  consumeIdempotently,
  type RedisStreamsConsumeOptions,
  type RedisStreamsInboxConsumer,
} from './redis-streams/consumer.js';
export { FIELD, type StreamEntry } from './redis-streams/fields.js';
export {
  RedisPubSubNotifier,
  type RedisPubSubNotifierOptions,
  RedisStreamsPublisher,
  type RedisStreamsPublisherOptions,
} from './redis-streams/publisher.js';
export * from './shared-exports.js';
