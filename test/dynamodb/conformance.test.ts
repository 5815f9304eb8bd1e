/**
 * The Store contract on dynalite, twice: with the refused write handing back the item, as DynamoDB does (the
 * store's one-round-trip path), and with dynalite as it ships, without it (the store's fallback read).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DynamoDbStore } from '../../src/stores/dynamodb/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { type Backend, returnItemOnRefusal, startDynalite } from './support/dynalite.js';

let backend: Backend;
beforeAll(async () => {
  backend = await startDynalite();
});
afterAll(async () => backend?.close());

describe('refusals carry the item (as on DynamoDB)', () => {
  beforeAll(() => returnItemOnRefusal(true));
  runStoreConformance({
    name: 'DynamoDbStore',
    harness: { describe, it },
    createStore: ({ clock }) => new DynamoDbStore({ client: backend.client, clock }),
    stormSize: 150,
  });
});

describe('refusals without the item (dynalite as it ships)', () => {
  beforeAll(() => returnItemOnRefusal(false));
  runStoreConformance({
    name: 'DynamoDbStore, fallback read',
    harness: { describe, it },
    createStore: ({ clock }) => new DynamoDbStore({ client: backend.client, clock }),
    stormSize: 100,
    propertyRuns: 30,
  });
});
