/**
 * @module The relay's options, their defaults, and their checks: validated once when the relay is built, including
 * how they bound each other (a publish timeout within the lease).
 */
import type { Pool } from 'pg';
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions, wholeNumber } from '../../core/validate.js';
import { checkHook, type RelayInstrumentation } from '../instrumentation.js';
import type { Publisher } from '../publisher.js';
import type { OutboxBackend } from './backend.js';
import { type Backoff, type BackoffOptions, resolveBackoff } from './backoff.js';
import { backendOf, isMySqlPool, type MySqlPoolLike } from './dialect.js';
import type { RelayEvent } from './relay-events.js';
import { type OutboxTable, outboxTable, type SchemaOptions } from './table.js';
import { type TopicsOptions, topicList } from './topics.js';

export interface OutboxRelayOptions extends SchemaOptions, TopicsOptions {
  /**
   * The caller's pool: a `pg` `Pool` (one connection per statement, plus one held for LISTEN when `listen` is on),
   * or a `mysql2/promise` or `mariadb` pool (MySQL / MariaDB: one connection per statement or short transaction).
   */
  readonly pool: Pool | MySqlPoolLike;
  /** Where messages go (`NatsPublisher`, `RabbitMqPublisher`, `RedisStreamsPublisher`, or your own). */
  readonly publisher: Publisher;
  /** Rows claimed per cycle. Default 500. */
  readonly batchSize?: number;
  /** How long a claim holds before another relay may take the rows over (the relay crashed). Default 30,000 ms. */
  readonly leaseMs?: number;
  /** A publish not confirmed within this counts as failed. At most leaseMs / 2. Default 5,000 ms. */
  readonly publishTimeoutMs?: number;
  /** Publishes in flight at once within a batch. Default 256. */
  readonly publishConcurrency?: number;
  /** Attempts after which a message the broker keeps refusing becomes a dead letter. Default 10. */
  readonly maxAttempts?: number;
  /** Retry delays per message (exponential with jitter) and the relay's pause when the broker is down. */
  readonly backoff?: BackoffOptions;
  /** Shortest idle poll interval; it doubles while there is nothing to do. Default 25 ms. */
  readonly minPollMs?: number;
  /**
   * Longest idle poll interval: the delivery delay when no NOTIFY arrives (on MySQL, which has no NOTIFY, the
   * delivery delay of an idle relay). Default 1,000 ms.
   */
  readonly maxPollMs?: number;
  /**
   * LISTEN for the writers' NOTIFY hints (turn off behind transaction-mode poolers). Default true on PostgreSQL;
   * MySQL has no LISTEN/NOTIFY, so there the relay only polls and `listen: true` is refused.
   */
  readonly listen?: boolean;
  /** Keep published rows this long (then purge them in batches); 0 deletes them as they are published. Default 0. */
  readonly keepPublishedMs?: number;
  /** How often published rows past `keepPublishedMs` are purged. Default 1,000 ms. */
  readonly purgeIntervalMs?: number;
  /** Rows per purge statement. Default 1,000. */
  readonly purgeBatchSize?: number;
  /** Prefix for message ids, when several outboxes publish into one deduplicating stream. Default ''. */
  readonly idPrefix?: string;
  /** Must be true to relay into an at-most-once publisher (Redis pub/sub), which can lose messages. */
  readonly acceptAtMostOnce?: boolean;
  /** Receives every relay event (published, failed, deadLettered, outage, error, …). */
  readonly onEvent?: (event: RelayEvent) => void;
  /** A span per publish linked to the trace that wrote the event, and the relay's metrics: `otel()`. */
  readonly instrumentation?: RelayInstrumentation;
}

const KNOWN = [
  'schema',
  'topics',
  'pool',
  'publisher',
  'batchSize',
  'leaseMs',
  'publishTimeoutMs',
  'publishConcurrency',
  'maxAttempts',
  'backoff',
  'minPollMs',
  'maxPollMs',
  'listen',
  'keepPublishedMs',
  'purgeIntervalMs',
  'purgeBatchSize',
  'idPrefix',
  'acceptAtMostOnce',
  'onEvent',
  'instrumentation',
] as const;

export interface RelaySettings {
  readonly table: OutboxTable;
  /** Undefined: every topic. */
  readonly topics: readonly string[] | undefined;
  /** The pool's dialect, bound to the schema and topics: what the relay claims, settles and purges through. */
  readonly backend: OutboxBackend;
  /** The pool, when it is a `pg` one: the waker's LISTEN connection comes from it. */
  readonly pgPool: Pool | undefined;
  readonly publisher: Publisher;
  readonly batchSize: number;
  readonly leaseMs: number;
  readonly publishTimeoutMs: number;
  readonly publishConcurrency: number;
  readonly maxAttempts: number;
  readonly backoff: Backoff;
  readonly minPollMs: number;
  readonly maxPollMs: number;
  readonly listen: boolean;
  readonly keepPublishedMs: number;
  readonly purgeIntervalMs: number;
  readonly purgeBatchSize: number;
  readonly idPrefix: string;
  readonly onEvent: ((event: RelayEvent) => void) | undefined;
  readonly instrumentation: RelayInstrumentation | undefined;
}

export function resolveRelayOptions(options: OutboxRelayOptions): RelaySettings {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('OutboxRelay: options are required');
  knownOptions('OutboxRelay', options, KNOWN);
  const { pool, publisher } = options;
  const mysql = isMySqlPool(pool);
  if (!mysql && (pool === null || typeof pool !== 'object' || typeof pool.connect !== 'function')) {
    throw new InvalidOptionsError('OutboxRelay: pool must be a pg Pool, or a mysql2/promise or mariadb pool');
  }
  if (publisher === null || typeof publisher !== 'object' || typeof publisher.publish !== 'function') {
    throw new InvalidOptionsError('OutboxRelay: publisher must have a publish(message, signal) method');
  }
  if (publisher.delivery === 'at-most-once' && options.acceptAtMostOnce !== true) {
    throw new InvalidOptionsError(
      `OutboxRelay: the ${publisher.name} publisher is at-most-once (messages can be lost); pass acceptAtMostOnce: true to use it as a notification channel`,
    );
  }
  const leaseMs = wholeNumber('leaseMs', options.leaseMs, 30_000, { min: 100 });
  const publishTimeoutMs = wholeNumber(
    'publishTimeoutMs',
    options.publishTimeoutMs,
    Math.min(5_000, leaseMs / 2),
    {
      min: 1,
      max: Math.floor(leaseMs / 2),
    },
  );
  const minPollMs = wholeNumber('minPollMs', options.minPollMs, 25, { min: 1 });
  for (const flag of ['listen', 'acceptAtMostOnce'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') {
      throw new InvalidOptionsError(`${flag} must be a boolean`);
    }
  }
  if (mysql && options.listen === true) {
    throw new InvalidOptionsError(
      'OutboxRelay: MySQL has no LISTEN/NOTIFY; leave listen out (the relay polls, every minPollMs to maxPollMs)',
    );
  }
  if (options.idPrefix !== undefined && typeof options.idPrefix !== 'string') {
    throw new InvalidOptionsError('idPrefix must be a string');
  }
  if (options.onEvent !== undefined && typeof options.onEvent !== 'function') {
    throw new InvalidOptionsError('onEvent must be a function');
  }
  const topics = topicList('OutboxRelay', options.topics);
  return {
    table: outboxTable(options.schema),
    topics,
    backend: backendOf(pool, options.schema, topics),
    pgPool: mysql ? undefined : (pool as Pool),
    publisher,
    batchSize: wholeNumber('batchSize', options.batchSize, 500, { min: 1, max: 10_000 }),
    leaseMs,
    publishTimeoutMs,
    publishConcurrency: wholeNumber('publishConcurrency', options.publishConcurrency, 256, { min: 1 }),
    maxAttempts: wholeNumber('maxAttempts', options.maxAttempts, 10, { min: 1, max: 1_000_000 }),
    backoff: resolveBackoff(options.backoff),
    minPollMs,
    maxPollMs: wholeNumber('maxPollMs', options.maxPollMs, Math.max(1_000, minPollMs), { min: minPollMs }),
    listen: !mysql && (options.listen ?? true),
    keepPublishedMs: wholeNumber('keepPublishedMs', options.keepPublishedMs, 0),
    purgeIntervalMs: wholeNumber('purgeIntervalMs', options.purgeIntervalMs, 1_000, { min: 1 }),
    purgeBatchSize: wholeNumber('purgeBatchSize', options.purgeBatchSize, 1_000, { min: 1, max: 100_000 }),
    idPrefix: options.idPrefix ?? '',
    onEvent: options.onEvent,
    instrumentation: checkHook<RelayInstrumentation>('OutboxRelay', options.instrumentation, ['relay']),
  };
}
