import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { MemoryStore } from '../../../src/index.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { requireService, services } from '../../support/services.js';
import type { StoreSetup } from './fixture.js';

export const memoryStore: StoreSetup = { name: 'memory', create: () => new MemoryStore() };

/**
 * The machine's Redis behind `RedisStore`, under a prefix of this test file's own (removed afterwards), so
 * files can run in parallel with other engineers' tests. Registers its own beforeAll/afterAll.
 */
export function redisStore(label: string): StoreSetup {
  const prefix = `oncely-http-${label}-${randomUUID().slice(0, 8)}`;
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
