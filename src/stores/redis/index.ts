/**
 * @module `oncely/redis`: the Redis store (`RedisStore`, on standalone Redis, Sentinel and Cluster) and the types of
 * its options, key layout and stats.
 */
export type { KeyLayout } from './keys.js';
export type { DurableOptions, RedisStoreOptions } from './options.js';
export type { RedisClient } from './scripts.js';
export type { RedisStoreStats } from './stats.js';
export { RedisStore } from './store.js';
