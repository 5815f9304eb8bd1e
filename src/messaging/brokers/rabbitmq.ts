/**
 * @module `oncely/rabbitmq`: RabbitMQ publisher for the outbox relay (confirm channel, persistent, `message-id` =
 * outbox id) and an idempotent consumer helper. Needs `amqplib`.
 */

export {
  consumeIdempotently,
  defaultRabbitMqMessageId,
  type RabbitMqConsumeOptions,
  type RabbitMqInboxConsumer,
} from './rabbitmq/consumer.js';
export {
  RabbitMqPublisher,
  type RabbitMqPublisherOptions,
  UnroutableMessageError,
} from './rabbitmq/publisher.js';
export * from './shared-exports.js';
