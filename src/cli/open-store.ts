import type { Pool } from 'pg';
import { isInvalidOptionsError } from '../core/errors.js';
import type { Store } from '../core/store.js';
import { MemoryStore } from '../stores/memory.js';
import { UsageError } from './errors.js';
import { openPool } from './postgres-pool.js';
import { openRedisClient } from './redis-client.js';

export const STORE_KINDS = ['memory', 'redis', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

export interface OpenedStore {
  readonly store: Store;
  /** The pool behind a PostgreSQL store (the demo's transactional mode and relay use it too). */
  readonly pool?: Pool;
  readonly description: string;
  /** Closes the store and the connections the CLI opened for it. */
  close(): Promise<void>;
}

/**
 * Opens a store for a CLI command. The CLI is the one place in oncely that dials connections itself (the library
 * never does): Redis from REDIS_URL, PostgreSQL from DATABASE_URL, both defaulting to localhost.
 */
export interface StoreLocation {
  /** Redis key prefix. */
  readonly prefix?: string | undefined;
  /** PostgreSQL schema of the keys table. */
  readonly schema?: string | undefined;
}

export async function openStore(kind: StoreKind, options: StoreLocation = {}): Promise<OpenedStore> {
  if (kind === 'memory') {
    const store = new MemoryStore();
    return { store, description: 'memory (in this process)', close: () => store.close() };
  }
  if (kind === 'redis') return openRedis(options.prefix);
  return openPostgres(options.schema);
}

async function openRedis(prefix: string | undefined): Promise<OpenedStore> {
  const { client, url } = await openRedisClient();
  const { RedisStore } = await import('../stores/redis/index.js');
  let store: InstanceType<typeof RedisStore>;
  try {
    store = new RedisStore({ client, ...(prefix === undefined ? {} : { prefix }) });
  } catch (error) {
    // The connected client would keep the process alive after the message.
    client.disconnect();
    if (isInvalidOptionsError(error))
      throw new UsageError(`--prefix "${prefix}" is not valid: ${error.message}`);
    throw error;
  }
  return {
    store,
    description: `redis ${url}`,
    close: async () => {
      await store.close?.();
      client.disconnect();
    },
  };
}

async function openPostgres(schema: string | undefined): Promise<OpenedStore> {
  const { pool, url } = await openPool({ max: 20 });
  try {
    const { PostgresStore } = await import('../stores/postgres/index.js');
    const store = new PostgresStore({ pool, ...(schema === undefined ? {} : { schema }) });
    await store.migrate();
    return {
      store,
      pool,
      description: `postgres ${url}`,
      close: async () => {
        await store.close?.();
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end();
    throw error;
  }
}
