/**
 * @module `redisStore(label)`: the machine's Redis behind `RedisStore` for a test file, under a prefix of the file's
 * own (removed afterwards), so files run in parallel with other engineers' tests. The HTTP, NestJS and Lambda suites
 * share it.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { requireService, services } from './services.js';

/** A store as a suite runs it: a name for the test titles, and a new store per app. */
export interface StoreSetup {
  readonly name: string;
  create(): Store;
}

/** Prefix `oncely-<label>-<random>`; registers its own beforeAll/afterAll. */
export function redisStore(label: string): StoreSetup {
  const prefix = `oncely-${label}-${randomUUID().slice(0, 8)}`;
  let client: Redis | undefined;
  beforeAll(async () => {
    await requireService('redis');
    client = new Redis(services.redis.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    if (client === undefined) return;
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
    await client.quit();
  });
  return {
    name: 'redis',
    create: () => {
      if (client === undefined) throw new Error('the Redis client is not ready (see beforeAll)');
      return new RedisStore({ client, prefix });
    },
  };
}
