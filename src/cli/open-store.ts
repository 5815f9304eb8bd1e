import type { Pool } from 'pg';
import type { Store } from '../core/store.js';
import { MemoryStore } from '../stores/memory.js';
import { UsageError } from './errors.js';

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
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const { Redis } = await requirePeer<typeof import('ioredis')>('ioredis');
  const { RedisStore } = await import('../stores/redis/index.js');
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect().catch((error: Error) => {
    client.disconnect();
    throw new UsageError(
      `cannot reach Redis at ${url} (${error.message}); set REDIS_URL or start redis-server`,
    );
  });
  const store = new RedisStore({ client, ...(prefix === undefined ? {} : { prefix }) });
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
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const pg = await requirePeer<typeof import('pg')>('pg');
  const { PostgresStore } = await import('../stores/postgres/index.js');
  const pool = new pg.default.Pool({ connectionString: url, max: 20 });
  await pool.query('select 1').catch(async (error: Error) => {
    await pool.end();
    throw new UsageError(
      `cannot reach PostgreSQL at ${url} (${error.message}); set DATABASE_URL or start PostgreSQL`,
    );
  });
  const store = new PostgresStore({ pool, ...(schema === undefined ? {} : { schema }) });
  await store.migrate();
  return {
    store,
    pool,
    description: `postgres ${url.replace(/:[^:@/]*@/, ':***@')}`,
    close: async () => {
      await store.close?.();
      await pool.end();
    },
  };
}

async function requirePeer<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch {
    throw new UsageError(`this store needs the "${name}" package: npm install ${name}`);
  }
}
