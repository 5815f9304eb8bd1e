/**
 * @module `oncely/rabbitmq`: RabbitMQ publisher for the outbox relay (confirm channel, persistent, `message-id` =
 * outbox id) and an idempotent consumer helper. Needs `amqplib`.
 */
export {
  actionFor,
  Inbox,
  type InboxContext,
  type InboxHandler,
  type InboxOptions,
  type InboxOutcome,
} from '../consumer.js';
export type { OutboxMessage, Publisher, PublisherContext } from '../publisher.js';
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
