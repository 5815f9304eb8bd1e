import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { RedisStore } from '../../src/stores/redis/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { requireService, services } from '../support/services.js';

// For `npm run mutate` only (npm test runs the full-size suite in test/redis/conformance-local.test.ts): the
// conformance suite on the machine's Redis with smaller storms and fewer property runs, since it runs once per
// mutant of the store.
const prefix = `oncely-mutate-${randomUUID().slice(0, 8)}`;
let client: Redis;

beforeAll(async () => {
  await requireService('redis');
  client = new Redis(services.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  await new Promise((resolve) => client.once('ready', resolve));
});

afterAll(async () => {
  const keys = await client.keys(`${prefix}*`);
  if (keys.length > 0) await client.del(...keys);
  await client.quit();
});

runStoreConformance({
  name: 'RedisStore (mutation)',
  harness: { describe, it },
  createStore: ({ clock }) => new RedisStore({ client, prefix, clock }),
  stormSize: 200,
  propertyRuns: 40,
});
