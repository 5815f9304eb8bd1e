/**
 * @module The stores the adapter suites (HTTP, Lambda, NestJS, GraphQL, tRPC) run on, one setup each: memory, and
 * Redis, PostgreSQL, MySQL/MariaDB and DynamoDB (dynalite) in a place of the test file's own (a key prefix, a
 * schema, a table), made before its tests and removed after them, so files run in parallel with other engineers'.
 * Each store is constructed as its page in docs/stores/ shows. The MySQL and DynamoDB drivers (and dynalite) are
 * loaded by the setups that use them, so a file on memory or Redis never pays their import time (half a second).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { MemoryStore, type Store } from '../../src/index.js';
import type { MySqlPool } from '../../src/stores/mysql/index.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import type { Backend } from '../dynamodb/support/dynalite.js';
import { createTestSchema, type TestSchema } from '../postgres/support.js';
import { requireService, services } from './services.js';

/** A store as a suite runs it: a name for the test titles, and a new store per app. */
export interface StoreSetup {
  readonly name: string;
  create(): Store;
}

export const memoryStore: StoreSetup = { name: 'memory', create: () => new MemoryStore() };

/** Holds what `beforeAll` made for `create`, which throws a clear error when called before it. */
function ready<T>(what: string): { set(value: T): void; get(): T; readonly value: T | undefined } {
  let value: T | undefined;
  return {
    set: (made) => {
      value = made;
    },
    get: () => {
      if (value === undefined) throw new Error(`${what} is not ready (see beforeAll)`);
      return value;
    },
    get value() {
      return value;
    },
  };
}

/** `RedisStore` on the machine's Redis under the prefix `oncely-<label>-<random>`, its keys deleted afterwards. */
export function redisStore(label: string): StoreSetup {
  const prefix = `oncely-${label}-${randomUUID().slice(0, 8)}`;
  const client = ready<Redis>('the Redis client');
  beforeAll(async () => {
    await requireService('redis');
    client.set(new Redis(services.redis.url, { maxRetriesPerRequest: 1 }));
  });
  afterAll(async () => {
    const redis = client.value;
    if (redis === undefined) return;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });
  return { name: 'redis', create: () => new RedisStore({ client: client.get(), prefix }) };
}

/** `PostgresStore` on the machine's PostgreSQL in a migrated schema `oncely_test_<label>_…`, dropped afterwards. */
export function postgresStore(label: string): StoreSetup {
  const schema = ready<TestSchema>('the PostgreSQL schema');
  // A store that waited for a key holds a pooled connection to LISTEN on: closed before the schema is dropped, or
  // the drop would queue for a connection forever.
  const made: PostgresStore[] = [];
  beforeAll(async () => {
    await requireService('postgres');
    schema.set(await createTestSchema(label, 4));
  });
  afterAll(async () => {
    for (const store of made) await store.close();
    await schema.value?.drop();
  });
  return {
    name: 'postgres',
    create: () => {
      const { pool, schema: name } = schema.get();
      const store = new PostgresStore({ pool, schema: name });
      made.push(store);
      return store;
    },
  };
}

/**
 * `MySqlStore` on the machine's MariaDB, over a `mysql2/promise` pool, in a migrated table
 * `oncely_test_<label>_…` (dropped with its procedures afterwards).
 */
export function mysqlStore(label: string): StoreSetup {
  const made = ready<{ pool: MySqlPool; table: string; create(): Store }>('the MySQL table');
  beforeAll(async () => {
    await requireService('mariadb');
    const [{ default: mysql }, { MySqlStore }, { uniqueTable }] = await Promise.all([
      import('mysql2/promise'),
      import('../../src/stores/mysql/index.js'),
      import('../mysql/support.js'),
    ]);
    const pool = mysql.createPool({ uri: services.mariadb.url });
    const table = uniqueTable(label);
    made.set({ pool, table, create: () => new MySqlStore({ pool, table }) });
    await new MySqlStore({ pool, table }).migrate();
  });
  afterAll(async () => {
    if (made.value === undefined) return;
    const { pool, table } = made.value;
    const { dropTable } = await import('../mysql/support.js');
    await dropTable(pool, table);
    await pool.end();
  });
  return { name: 'mysql', create: () => made.get().create() };
}

// One dynalite per test file (Vitest gives each file its own module instance), shared by the file's setups.
let dynalite: { backend: Promise<Backend>; users: number } | undefined;

/**
 * `DynamoDbStore` on dynalite (started once per test file, in the test process), in a table
 * `oncely_test_<label>_…` made by the store's `migrate()` and deleted afterwards, over a client with a request
 * timeout that throws, as docs/stores/dynamodb.md asks. dynalite is taught to return the item with a refused
 * write, as DynamoDB does (see test/dynamodb/support/dynalite.ts), so a replay takes the one round trip it takes
 * on AWS.
 */
export function dynamoDbStore(label: string): StoreSetup {
  const table = `oncely_test_${label}_${randomBytes(4).toString('hex')}`;
  const made = ready<{ client: DynamoDBClient; create(): Store }>('the DynamoDB table');
  beforeAll(async () => {
    const [support, { DynamoDbStore }] = await Promise.all([
      import('../dynamodb/support/dynalite.js'),
      import('../../src/stores/dynamodb/index.js'),
    ]);
    support.returnItemOnRefusal(true);
    dynalite ??= { backend: support.startDynalite(), users: 0 };
    dynalite.users++;
    const client = (await dynalite.backend).newClient({
      requestHandler: { requestTimeout: 1_000, throwOnRequestTimeout: true },
    });
    made.set({ client, create: () => new DynamoDbStore({ client, table }) });
    await new DynamoDbStore({ client, table }).migrate();
  });
  afterAll(async () => {
    if (dynalite === undefined) return;
    const client = made.value?.client;
    if (client !== undefined) {
      const { DeleteTableCommand } = await import('@aws-sdk/client-dynamodb');
      await client.send(new DeleteTableCommand({ TableName: table }));
    }
    if (--dynalite.users > 0) return;
    const { backend } = dynalite;
    dynalite = undefined;
    await (await backend).close();
  });
  return { name: 'dynamodb', create: () => made.get().create() };
}
