/**
 * @module `oncely/redis`: the Redis store (`RedisStore`, on standalone Redis, Sentinel and Cluster, through the
 * client a team already has: ioredis, iovalkey, node-redis or Valkey GLIDE) and the types of its options, key
 * layout and stats.
 */
export type { GlideClientLike } from './clients/glide.js';
export type { IoredisApiClient } from './clients/ioredis.js';
export type { NodeRedisClientLike } from './clients/node-redis.js';
export type { RedisStoreClient } from './clients/recognise.js';
export type { KeyLayout } from './keys.js';
export type { DurableOptions, RedisStoreOptions } from './options.js';
export type { RedisClient } from './scripts.js';
export type { RedisStoreStats } from './stats.js';
export { RedisStore } from './store.js';
