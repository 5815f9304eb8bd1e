/**
 * @module The store of an app instance, from its spec: a RedisStore or PostgresStore on the same prefix or schema
 * as the test's own store (one Redis client and one pool for the whole server), a Redis client of its own behind
 * the test's silent TCP proxy, or a store whose every call is refused (a Redis that is down).
 */
import { Redis } from 'ioredis';
import type { Store } from 'oncely';
import { PostgresStore } from 'oncely/postgres';
import { RedisStore } from 'oncely/redis';
import pg from 'pg';
import type { StoreSpec } from './wire';

interface Shared {
  redis?: Redis;
  pool?: pg.Pool;
}
// On globalThis, as the instances are (instances.ts): one Redis client and one pool for every route file.
const holder = globalThis as { __oncelyNextStores?: Shared };
holder.__oncelyNextStores ??= {};
const shared = holder.__oncelyNextStores;

export interface OpenedStore {
  readonly store: Store;
  close(): Promise<void>;
}

export function openStore(spec: StoreSpec): OpenedStore {
  if (spec.kind === 'unreachable') return { store: unreachableStore(), close: async () => {} };
  if (spec.kind === 'postgres') {
    shared.pool ??= new pg.Pool({ connectionString: env('DATABASE_URL'), max: 10 });
    const store = new PostgresStore({ pool: shared.pool, schema: spec.schema });
    return { store, close: () => store.close() };
  }
  if (spec.port !== undefined) {
    const client = new Redis({ host: '127.0.0.1', port: spec.port, maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    const store = new RedisStore({ client, prefix: spec.prefix });
    return {
      store,
      close: async () => {
        await store.close();
        client.disconnect();
      },
    };
  }
  shared.redis ??= new Redis(env('REDIS_URL'), { maxRetriesPerRequest: 1 });
  const store = new RedisStore({ client: shared.redis, prefix: spec.prefix });
  return { store, close: () => store.close() };
}

function unreachableStore(): Store {
  const refuse = async (): Promise<never> => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  };
  return {
    name: 'unreachable',
    begin: refuse,
    complete: refuse,
    release: refuse,
    renew: refuse,
    get: refuse,
    delete: refuse,
  };
}

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}
