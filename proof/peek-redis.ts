import type { Cluster, Redis } from 'ioredis';
import { RedisStore } from '../src/stores/redis/index.js';

/**
 * Reads a record as the store reads it (its own `get` script and decoder, so the peek follows the record layout),
 * on the checker's direct connection, never through the proxies.
 */
export function redisPeek(client: Redis | Cluster, prefix: string) {
  const store = new RedisStore({ client, prefix });
  return async (id: string) => {
    const record = await store.get(id);
    return record && { state: record.state, token: record.token };
  };
}
