import { afterAll, beforeAll, describe, it } from 'vitest';
import { PostgresStore, type TransactionalPostgresStore } from '../../src/stores/postgres/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { createTestSchema, type TestSchema } from '../postgres/support.js';
import { requireService } from '../support/services.js';

// For `npm run mutate` only (npm test runs the full-size suite in test/postgres/conformance.test.ts): the
// conformance suite on the machine's PostgreSQL, plain and transactional, with smaller storms and fewer property
// runs, since it runs once per mutant of the store.
let db: TestSchema;
beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('mutate');
});
afterAll(async () => db?.drop());

runStoreConformance({
  name: 'PostgresStore (mutation)',
  harness: { describe, it },
  createStore: ({ clock }) => new PostgresStore({ pool: db.pool, schema: db.schema, clock }),
  stormSize: 200,
  propertyRuns: 40,
});

runStoreConformance({
  name: 'PostgresStore in transactional mode, plain calls (mutation)',
  harness: { describe, it },
  createStore: ({ clock }) => new PostgresStore({ pool: db.pool, schema: db.schema, clock }).transactional(),
  destroyStore: async (store) => (store as TransactionalPostgresStore).base.close?.(),
  stormSize: 100,
  propertyRuns: 20,
});
