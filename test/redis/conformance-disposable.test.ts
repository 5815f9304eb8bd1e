import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { RedisStore } from '../../src/stores/redis/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { type RedisProcess, startRedis, stopAll } from './support/redis-server.js';

// A redis-server of this file's own on a free port, with the default prefix and nothing else on it.
let server: RedisProcess | undefined;
let client: Redis;

beforeAll(async () => {
  server = await startRedis();
  client = new Redis({
    port: server.port,
    host: '127.0.0.1',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  await new Promise((resolve) => client.once('ready', resolve));
});

afterAll(async () => {
  client?.disconnect();
  await stopAll([server]);
});

runStoreConformance({
  name: 'RedisStore on a disposable redis-server',
  harness: { describe, it },
  createStore: ({ clock }) => new RedisStore({ client, clock }),
});
