/** @module The stores the HTTP suites run on: memory, and the machine's Redis under a prefix of the file's own. */
import { MemoryStore } from '../../../src/index.js';
import { redisStore as redisStoreOf } from '../../support/redis-store.js';
import type { StoreSetup } from './fixture.js';

export const memoryStore: StoreSetup = { name: 'memory', create: () => new MemoryStore() };

/** `RedisStore` on the machine's Redis under `oncely-http-<label>-…`, removed after the file's tests. */
export function redisStore(label: string): StoreSetup {
  return redisStoreOf(`http-${label}`);
}
