/**
 * @module The stores the GraphQL and tRPC suites run on: MemoryStore, the machine's Redis under a prefix of the
 * file's own, and the machine's PostgreSQL in a migrated schema of the file's own (each removed afterwards).
 */
import { afterAll, beforeAll } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { createTestSchema, type TestSchema } from '../postgres/support.js';
import { redisStore, type StoreSetup } from '../support/redis-store.js';
import { requireService } from '../support/services.js';

export type { StoreSetup };

/** PostgreSQL in a schema `<label>_…` of its own, migrated before the file's tests and dropped after them. */
function postgresStore(label: string): StoreSetup {
  let schema: TestSchema | undefined;
  // Each store that waited for a key holds a pooled connection to LISTEN on: closed before the schema is dropped,
  // or the drop would queue for a connection forever.
  const made: PostgresStore[] = [];
  beforeAll(async () => {
    await requireService('postgres');
    schema = await createTestSchema(label, 4);
  });
  afterAll(async () => {
    for (const store of made) await store.close();
    await schema?.drop();
  });
  return {
    name: 'postgres',
    create: () => {
      if (schema === undefined) throw new Error('the PostgreSQL schema is not ready (see beforeAll)');
      const store = new PostgresStore({ pool: schema.pool, schema: schema.schema });
      made.push(store);
      return store;
    },
  };
}

/** Memory, Redis and PostgreSQL, for a suite run once on each. */
export function adapterStores(label: string): StoreSetup[] {
  return [{ name: 'memory', create: () => new MemoryStore() }, redisStore(label), postgresStore(label)];
}
