import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { RedisStore } from '../../src/stores/redis/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { requireService, services } from '../support/services.js';

// The machine's Redis, shared with other test files: a random prefix keeps this file's records apart.
const prefix = `oncely-test-${randomUUID().slice(0, 8)}`;
let client: Redis;

beforeAll(async () => {
  await requireService('redis');
  client = new Redis(services.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  await new Promise((resolve) => client.once('ready', resolve));
});

afterAll(async () => {
  await client.quit();
});

runStoreConformance({
  name: 'RedisStore on the machine Redis',
  harness: { describe, it },
  createStore: ({ clock }) => new RedisStore({ client, prefix, clock }),
});
