/**
 * @module `oncely/outbox`: the transactional outbox on PostgreSQL and on MySQL / MariaDB. Write events with
 * `outbox.add(client, event)` inside your transaction; run one or more `OutboxRelay`s to publish them through a
 * `Publisher` (`oncely/nats`, `oncely/rabbitmq`, `oncely/redis-streams`, or your own). Needs `pg`, or `mysql2` or
 * `mariadb`: the client or pool you pass chooses the dialect.
 */
export type {
  OutboxInstrumentation,
  PublishOutcome,
  RelayInstrumentation,
  RelayProbe,
} from '../instrumentation.js';
export type { OutboxMessage, Publisher, PublisherContext } from '../publisher.js';
export { type Backoff, type BackoffOptions, backoffDelayMs, retryHorizonMs } from './backoff.js';
export {
  type DeadLetter,
  type DeadLetterSelection,
  discardDeadLetters,
  type ListDeadLettersOptions,
  listDeadLetters,
  replayDeadLetters,
} from './dead-letters.js';
export type { MySqlPoolLike, OutboxDatabase } from './dialect.js';
export {
  type OutboxStats,
  outboxStats,
  type PurgePublishedOptions,
  purgePublished,
} from './maintenance.js';
export { type MigrationTarget, migrate } from './migrate.js';
export type { MySqlConnectionLike } from './mysql/connection.js';
export { mysqlOutboxDdl } from './mysql/migrate.js';
export { PublishTimeoutError } from './publish-batch.js';
export { type CycleResult, OutboxRelay } from './relay.js';
export type { RelayEvent } from './relay-events.js';
export type { OutboxRelayOptions } from './relay-options.js';
export { NOTIFY_CHANNEL, type Queryable, type SchemaOptions } from './table.js';
export type { TopicsOptions } from './topics.js';
export { Outbox, type OutboxEvent, type OutboxOptions, outbox } from './writer.js';
