/**
 * @module Opens the store a command names (`--store memory|redis|postgres|mysql|dynamodb` with its location options),
 * on the connection URL of that store (or, for DynamoDB, the AWS SDK's environment).
 */
import type { Pool } from 'pg';
import { isInvalidOptionsError } from '../core/errors.js';
import type { StoreInspector } from '../core/inspection.js';
import type { Store } from '../core/store.js';
import { MemoryStore } from '../stores/memory.js';
import { dynamoDbStoreOn, openDynamoDb, requireDynamoDbTable } from './dynamodb-client.js';
import { CommandFailed, UsageError } from './errors.js';
import { openMySqlPool, requireMySqlTable } from './mysql-pool.js';
import { keysTable, requireTable, shellWord } from './postgres-location.js';
import { openPool } from './postgres-pool.js';
import { openRedisClient } from './redis-client.js';

/** The stores the demo runs on. */
export const STORE_KINDS = ['memory', 'redis', 'postgres'] as const;
/** The stores the commands open: the demo's, and MySQL and DynamoDB for inspect, stats, purge and the dashboard. */
export type StoreKind = (typeof STORE_KINDS)[number] | 'mysql' | 'dynamodb';

export interface OpenedStore {
  readonly store: Store;
  /** The pool behind a PostgreSQL store (the demo's transactional mode and relay use it too). */
  readonly pool?: Pool;
  readonly description: string;
  /** Closes the store and the connections the CLI opened for it. */
  close(): Promise<void>;
}

/** The store's inspector: the commands read records only through it (every oncely store has one). */
export function inspectorOf(store: Store): StoreInspector {
  if (store.inspector === undefined) throw new CommandFailed(`the ${store.name} store has no inspector`);
  return store.inspector;
}

/**
 * Where the records are: `--prefix` for Redis, `--schema` and `--table` for PostgreSQL, `--table` for MySQL and
 * DynamoDB.
 */
export interface StoreLocation {
  readonly prefix?: string | undefined;
  readonly schema?: string | undefined;
  readonly table?: string | undefined;
}

export interface OpenOptions extends StoreLocation {
  /**
   * Create the PostgreSQL table when missing. Only the demo does (it is a sandbox); commands that read or
   * maintain records fail with a hint to run `oncely migrate` instead of creating anything.
   */
  readonly migrate?: boolean;
}

/**
 * Opens a store for a CLI command. The CLI is the one place in oncely that dials connections itself (the library
 * never does): Redis from REDIS_URL, PostgreSQL from DATABASE_URL, both defaulting to localhost.
 */
export async function openStore(kind: StoreKind, options: OpenOptions = {}): Promise<OpenedStore> {
  checkLocation(kind, options);
  if (kind === 'memory') {
    // Lives as long as the command (the demo's sandbox), so NODE_ENV=production in the shell must not refuse it.
    const store = new MemoryStore({ allowInProduction: true });
    return { store, description: 'memory (in this process)', close: () => store.close() };
  }
  if (kind === 'redis') return openRedis(options.prefix);
  if (kind === 'mysql') return openMySql(options.table);
  if (kind === 'dynamodb') return openDynamoDbStore(options.table);
  return openPostgres(options);
}

/** What each store takes instead, for the message about a flag of another store. */
const TAKES: Record<StoreKind, string> = {
  memory: 'the memory store takes neither',
  redis: 'Redis takes --prefix',
  postgres: 'PostgreSQL takes --schema and --table',
  mysql: 'MySQL takes --table (in the database of MYSQL_URL)',
  dynamodb: 'DynamoDB takes --table',
};

/** A flag of the other store is a mistake (it would be ignored, and the command would look at the wrong place). */
export function checkLocation(kind: StoreKind, options: StoreLocation): void {
  if (kind !== 'redis' && options.prefix !== undefined) {
    throw new UsageError(`--prefix goes with --store redis; ${TAKES[kind]}`);
  }
  if ((kind === 'mysql' || kind === 'dynamodb') && options.schema !== undefined) {
    throw new UsageError(`--schema goes with --store postgres; ${TAKES[kind]}`);
  }
  if (
    (kind === 'memory' || kind === 'redis') &&
    (options.schema !== undefined || options.table !== undefined)
  ) {
    throw new UsageError(
      `--schema and --table go with --store postgres; ${TAKES[kind]} (--store mysql and dynamodb take --table)`,
    );
  }
}

/** The DynamoDB store on the table `--table` names, with the client the AWS SDK makes from the environment. */
async function openDynamoDbStore(table: string | undefined): Promise<OpenedStore> {
  const opened = await openDynamoDb();
  try {
    const store = await dynamoDbStoreOn(opened, table);
    const flags = table === undefined ? [] : ['--table', shellWord(table)];
    const shown = await requireDynamoDbTable(opened, store.table, flags);
    return { store, description: `dynamodb ${shown}`, close: async () => opened.client.destroy() };
  } catch (error) {
    opened.client.destroy();
    throw error;
  }
}

async function openMySql(table: string | undefined): Promise<OpenedStore> {
  const { MySqlStore, schemaFor } = await import('../stores/mysql/index.js');
  const name = table ?? 'oncely_keys';
  try {
    schemaFor({ table: name }); // the store's own check of the name, before anything is dialled
  } catch (error) {
    throw new UsageError(`--table "${table}" is not valid: ${(error as Error).message}`);
  }
  const { pool, url } = await openMySqlPool();
  try {
    await requireMySqlTable(pool, name, url, table === undefined ? [] : ['--table', shellWord(table)]);
    const store = new MySqlStore({ pool, table: name });
    return { store, description: `mysql ${url}`, close: () => pool.end() };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
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

async function openPostgres(options: OpenOptions): Promise<OpenedStore> {
  const location = keysTable(options);
  const { pool, url } = await openPool({ max: 20 });
  try {
    const { PostgresStore } = await import('../stores/postgres/index.js');
    const store = new PostgresStore({
      pool,
      schema: location.schema,
      table: location.table,
      // Only the demo waits for keys in flight; the other commands need no LISTEN connection.
      listen: options.migrate === true,
    });
    if (options.migrate) await store.migrate();
    else await requireTable(pool, location.qualified, url, location.flags);
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
