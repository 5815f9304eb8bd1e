/**
 * @module Which transport a client gets, recognised by its shape (ioredis and iovalkey, node-redis, Valkey GLIDE),
 * never by importing the packages: they are optional peers, and a user has one of them, not all.
 */
import { InvalidOptionsError } from '../../../core/errors.js';
import type { RedisClient } from '../scripts.js';
import type { RedisTransport } from '../transport.js';
import { type GlideClientLike, GlideTransport, isGlideShaped } from './glide.js';
import { type IoredisApiClient, IoredisTransport, isIoredisShaped } from './ioredis.js';
import { isNodeRedisShaped, type NodeRedisClientLike, NodeRedisTransport } from './node-redis.js';

/**
 * A client the store runs on, caller-owned: an ioredis (or iovalkey) `Redis` or `Cluster`, a node-redis (>= 5)
 * client, Cluster or Sentinel, or a Valkey GLIDE `GlideClientLike` or `GlideClusterClient`.
 */
export type RedisStoreClient = RedisClient | IoredisApiClient | NodeRedisClientLike | GlideClientLike;

type Family = 'ioredis' | 'node-redis' | 'glide';

/** The family of a client by its shape, or undefined for anything else. */
export function familyOf(value: unknown): Family | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (isIoredisShaped(value)) return 'ioredis';
  if (isGlideShaped(value)) return 'glide';
  if (isNodeRedisShaped(value)) return 'node-redis';
  return undefined;
}

/** The transport of `client`; `subscriber`, when given, must be of the same family. */
export function transportFor(
  client: RedisStoreClient,
  subscriber: RedisStoreClient | undefined,
  connectWaitMs: number,
): RedisTransport {
  const family = familyOf(client);
  if (subscriber !== undefined && familyOf(subscriber) !== family) {
    throw new InvalidOptionsError(
      `RedisStore: subscriber must be a client of the same library as client (${family ?? 'unknown'})`,
    );
  }
  if (family === 'ioredis')
    return new IoredisTransport(client as RedisClient, subscriber as RedisClient | undefined, connectWaitMs);
  if (family === 'node-redis')
    return new NodeRedisTransport(
      client as NodeRedisClientLike,
      subscriber as NodeRedisClientLike | undefined,
      connectWaitMs,
    );
  if (family === 'glide')
    return new GlideTransport(client as GlideClientLike, subscriber as GlideClientLike | undefined);
  throw new InvalidOptionsError(
    'RedisStore: client must be a client you created: ioredis or iovalkey (Redis, Cluster), node-redis (createClient, createCluster, createSentinel) or Valkey GLIDE (GlideClientLike, GlideClusterClient)',
  );
}
