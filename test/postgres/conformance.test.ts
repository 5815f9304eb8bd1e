import { afterAll, beforeAll, describe, it } from 'vitest';
import { PostgresStore, type TransactionalPostgresStore } from '../../src/stores/postgres/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { requireService } from '../support/services.js';
import { createTestSchema, type TestSchema } from './support.js';

let db: TestSchema;
beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('conformance');
});
afterAll(async () => db?.drop());

runStoreConformance({
  name: 'PostgresStore',
  harness: { describe, it },
  createStore: ({ clock }) => new PostgresStore({ pool: db.pool, schema: db.schema, clock }),
});

runStoreConformance({
  name: 'PostgresStore in transactional mode (plain calls)',
  harness: { describe, it },
  createStore: ({ clock }) => new PostgresStore({ pool: db.pool, schema: db.schema, clock }).transactional(),
  destroyStore: async (store) => (store as TransactionalPostgresStore).base.close?.(),
  propertyRuns: 25,
  stormSize: 200,
});
