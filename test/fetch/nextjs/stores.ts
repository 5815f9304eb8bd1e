/**
 * @module The stores the Next.js semantics table runs on, and the spec that rebuilds each one in the server: the
 * test and the app open their own stores on the same Redis prefix or PostgreSQL schema, so a case that reads,
 * deletes or claims a record through its store (`store.get`, `store.delete`, `store.begin`) sees what the server
 * wrote. Both sides are the built package (dist/), so they agree on the record format even while src/ is ahead of
 * the last build. The table's own fault stores (every call refused; a Redis gone silent behind a TCP proxy) are
 * rebuilt from what they are.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../../src/index.js';
import type { StoreSetup } from '../../http/support/fixture.js';
import { requireService, services } from '../../support/services.js';
import type { StoreSpec } from './next-app/lib/wire.js';

type RedisModule = typeof import('../../../src/stores/redis/index.js');
type PostgresModule = typeof import('../../../src/stores/postgres/index.js');

/** The built package's stores, as the app imports them (`oncely/redis`, `oncely/postgres`). */
export async function builtStores(): Promise<{ redis: RedisModule; postgres: PostgresModule }> {
  const load = (path: string) =>
    import(/* @vite-ignore */ new URL(`../../../dist/${path}`, import.meta.url).href);
  const [redis, postgres] = await Promise.all([
    load('stores/redis/index.js'),
    load('stores/postgres/index.js'),
  ]);
  return { redis: redis as RedisModule, postgres: postgres as PostgresModule };
}

const specs = new WeakMap<Store, StoreSpec>();

/** How the server opens the same store as `store`, the test's. */
export function specOf(store: Store): StoreSpec {
  const known = specs.get(store);
  if (known !== undefined) return known;
  if (store.name === 'unreachable') return { kind: 'unreachable' };
  // The table's stopped Redis: a client of the server's own behind the same proxy, silent as the test's is.
  const stopped = (store as { stopped?: { proxy: { port: number } } }).stopped;
  if (stopped !== undefined)
    return { kind: 'redis', prefix: `oncely-next-stopped-${randomUUID()}`, port: stopped.proxy.port };
  throw new Error(`the Next.js harness cannot open store "${store.name}" in the server: add it to specOf`);
}

/** `RedisStore` under `oncely-next-<random>`, removed after the file's tests; the server opens the same prefix. */
export function nextRedisStore(): StoreSetup {
  const prefix = `oncely-next-${randomUUID().slice(0, 8)}`;
  let client: Redis | undefined;
  let built: RedisModule | undefined;
  beforeAll(async () => {
    await requireService('redis');
    built = (await builtStores()).redis;
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
      if (client === undefined || built === undefined)
        throw new Error('the Redis client is not ready (see beforeAll)');
      const store = new built.RedisStore({ client, prefix });
      specs.set(store, { kind: 'redis', prefix });
      return store;
    },
  };
}

/** `PostgresStore` in a migrated schema of this file's own (dropped afterwards); the server opens the same schema. */
export function nextPostgresStore(): StoreSetup {
  const schema = `oncely_test_nextjs_${randomUUID().slice(0, 8)}`;
  let pool: pg.Pool | undefined;
  let built: PostgresModule | undefined;
  beforeAll(async () => {
    await requireService('postgres');
    built = (await builtStores()).postgres;
    pool = new pg.Pool({ connectionString: services.postgres.url, max: 4 });
    pool.on('error', () => {});
    await built.migrate(pool, { schema });
  });
  afterAll(async () => {
    if (pool === undefined) return;
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });
  return {
    name: 'postgres',
    create: () => {
      if (pool === undefined || built === undefined)
        throw new Error('the PostgreSQL schema is not ready (see beforeAll)');
      const store = new built.PostgresStore({ pool, schema });
      specs.set(store, { kind: 'postgres', schema });
      return store;
    },
  };
}
