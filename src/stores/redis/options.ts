/**
 * @module The Redis store's options, their defaults, and their checks: every option is validated once, when the
 * store is built, so a bad one fails at startup with a message that says what to pass, never on a request.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions, optionalFunction, wholeNumber } from '../../core/validate.js';
import { familyOf, type RedisStoreClient } from './clients/recognise.js';

/** Wait for replicas after each `complete`, for deployments that must not lose a completed record on failover. */
export interface DurableOptions {
  /** Replicas that must acknowledge the completed record (Redis `WAIT numreplicas`). At least 1. */
  readonly replicas: number;
  /** How long `WAIT` may block, in ms. A shortfall fails the call with `StoreUnavailableError`. At least 1. */
  readonly timeoutMs: number;
}

export interface RedisStoreOptions {
  /**
   * A caller-owned client, which the store never closes: an ioredis or iovalkey `Redis` (standalone or Sentinel)
   * or `Cluster` (on a `Cluster` the store registers its scripts with `defineCommand`), a node-redis (>= 5) client,
   * Cluster or Sentinel, or a Valkey GLIDE `GlideClient` or `GlideClusterClient`. Recommended client options per
   * client: see `docs/stores/redis.md`.
   */
  readonly client: RedisStoreClient;
  /** First part of every Redis key and channel: records live at `<prefix>:{<key>}`. Default `'oncely'`. */
  readonly prefix?: string;
  /**
   * The store's clock in ms since the epoch. Default: none, so every script reads Redis `TIME` and app-server
   * clocks never matter. Tests pass a fake clock; it travels to the scripts as an argument.
   */
  readonly clock?: () => number;
  /** Confirm each completed record on replicas with `WAIT` (pipelined with the complete: no extra round trip). */
  readonly durable?: DurableOptions;
  /**
   * How long a call waits for a connection that is being established (startup, a reconnect in progress) before
   * failing with `StoreUnavailableError`. A call made while the client is known to be down fails at once.
   * Default 1,000 ms.
   */
  readonly connectWaitMs?: number;
  /**
   * The connection `waitFor` subscribes on, caller-owned and left open by `close()`, of the same library as
   * `client`. Default: one `client.duplicate()` made on the first `waitFor`, shared by all waiters, and closed by
   * `close()`; a GLIDE client cannot be duplicated, so without one its waiters poll.
   */
  readonly subscriber?: RedisStoreClient;
  /**
   * Batch the script calls made in one turn of the event loop into one pipeline per node (one write, and one
   * read on the server, for a burst of requests). Default true; false sends each call on its own.
   */
  readonly pipeline?: boolean;
  /** How often a waiter re-checks the record in case a pub/sub notice was lost. Default 500 ms. */
  readonly pollIntervalMs?: number;
  /** Most keys `stats()` inspects per call (it SCANs the prefix). Default 100,000. */
  readonly statsScanLimit?: number;
}

const OPTIONS = [
  'client',
  'prefix',
  'clock',
  'durable',
  'connectWaitMs',
  'subscriber',
  'pollIntervalMs',
  'statsScanLimit',
  'pipeline',
] as const;

export interface ResolvedOptions {
  readonly client: RedisStoreClient;
  readonly prefix: string;
  readonly clock: (() => number) | undefined;
  readonly durable: DurableOptions | undefined;
  readonly connectWaitMs: number;
  readonly subscriber: RedisStoreClient | undefined;
  readonly pollIntervalMs: number;
  readonly statsScanLimit: number;
  readonly pipeline: boolean;
}

/** Checks every option once, at construction, with messages that say what to pass instead. */
export function resolveOptions(options: RedisStoreOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionsError('RedisStore needs options: new RedisStore({ client })');
  }
  knownOptions('RedisStore', options, OPTIONS);
  const { client, prefix = 'oncely', clock, durable, subscriber, pipeline = true } = options;
  const family = familyOf(client);
  if (family === undefined) {
    throw new InvalidOptionsError(
      'RedisStore: client must be an ioredis or iovalkey Redis or Cluster, a node-redis (>= 5) client, Cluster or Sentinel, or a Valkey GLIDE client, that you created',
    );
  }
  if (subscriber !== undefined && familyOf(subscriber) !== family) {
    throw new InvalidOptionsError(
      `RedisStore: subscriber must be an ioredis, node-redis or GLIDE client of the same library as client (${family})`,
    );
  }
  if (typeof pipeline !== 'boolean')
    throw new InvalidOptionsError('RedisStore: pipeline must be true or false');
  if (typeof prefix !== 'string' || prefix.length === 0 || /[{}\s]/.test(prefix)) {
    throw new InvalidOptionsError(
      'RedisStore: prefix must be a non-empty string without braces or whitespace (braces would pin every record to one Cluster slot)',
    );
  }
  optionalFunction('clock', clock);
  return {
    client,
    prefix,
    clock,
    durable: durable === undefined ? undefined : resolveDurable(durable),
    connectWaitMs: wholeNumber('connectWaitMs', options.connectWaitMs, 1_000, { min: 0 }),
    subscriber,
    pollIntervalMs: wholeNumber('pollIntervalMs', options.pollIntervalMs, 500, { min: 1 }),
    statsScanLimit: wholeNumber('statsScanLimit', options.statsScanLimit, 100_000, { min: 1 }),
    pipeline,
  };
}

function resolveDurable(durable: DurableOptions): DurableOptions {
  if (durable === null || typeof durable !== 'object') {
    throw new InvalidOptionsError('RedisStore: durable must be { replicas, timeoutMs }');
  }
  knownOptions('RedisStore durable', durable, ['replicas', 'timeoutMs']);
  if (durable.replicas === undefined || durable.timeoutMs === undefined) {
    throw new InvalidOptionsError('RedisStore: durable needs both replicas and timeoutMs');
  }
  return {
    replicas: wholeNumber('durable.replicas', durable.replicas, 1, { min: 1 }),
    timeoutMs: wholeNumber('durable.timeoutMs', durable.timeoutMs, 1, { min: 1 }),
  };
}
