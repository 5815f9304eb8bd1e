import { describe, it } from 'vitest';
import { RedisStore } from '../../src/stores/redis/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { useDisposableRedis } from './support/disposable.js';

// A redis-server of this file's own on a free port, with the default prefix and nothing else on it.
const redis = useDisposableRedis();

runStoreConformance({
  name: 'RedisStore on a disposable redis-server',
  harness: { describe, it },
  createStore: ({ clock }) => new RedisStore({ client: redis.client, clock }),
});
