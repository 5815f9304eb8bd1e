import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDynamoStore } from '../../proof/dynamodb.js';
import { type StoreUnderTest, startStore } from '../../proof/stores.js';
import { services } from '../support/services.js';

// The proof's DynamoDB phase (`dynamodb`, on dynalite) restarts the store as a fault: fair only if dynalite keeps
// what it acknowledged across a SIGKILL, as DynamoDB keeps it. An in-memory dynalite would start empty, and every
// retried key would run again.
let store: StoreUnderTest;

beforeAll(async () => {
  store = await startStore(
    'dynamodb',
    {
      url: services.postgres.url,
      schema: `oncely_proof_t${randomBytes(3).toString('hex')}`,
      applicationName: '',
    },
    'unused',
    { mysqlUrl: services.mariadb.url, keep: false },
  );
});

afterAll(async () => {
  await store?.close();
});

describe("the proof's dynalite", () => {
  it('keeps a completed record across its SIGKILL and restart', async () => {
    const app = openDynamoStore(store.connection as Parameters<typeof openDynamoStore>[0]);
    try {
      const claim = await app.store.begin({
        key: 'k',
        fingerprint: 'f',
        leaseMs: 60_000,
        retentionMs: 60_000,
      });
      if (claim.kind !== 'acquired') throw new Error(`not acquired: ${claim.kind}`);
      const outcome = {
        status: 201,
        headers: [],
        body: new Uint8Array([1, 2, 3]),
        encoding: 'identity',
        storage: 'inline',
      } as const;
      expect(
        await app.store.complete({ key: 'k', token: claim.token, outcome, retentionMs: 60_000 }),
      ).toEqual({
        kind: 'ok',
      });
      expect(await store.restart(100)).toMatch(/SIGKILL/);
      expect(await store.peek('k')).toEqual({ state: 'completed', token: claim.token });
    } finally {
      await app.close();
    }
  });
});
