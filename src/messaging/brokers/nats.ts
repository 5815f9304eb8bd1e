/**
 * @module `oncely/nats`: NATS JetStream publisher for the outbox relay (`Nats-Msg-Id` = outbox id) and an idempotent
 * pull-consumer helper. Needs `@nats-io/jetstream`.
 */

export {
  consumeIdempotently,
  defaultNatsMessageId,
  type NatsConsumeOptions,
  type NatsInboxConsumer,
} from './nats/consumer.js';
export { NatsPublisher, type NatsPublisherOptions } from './nats/publisher.js';
export * from './shared-exports.js';
