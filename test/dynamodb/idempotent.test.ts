/**
 * `idempotent()` on a DynamoDbStore made as docs/stores/dynamodb.md shows (a caller-owned DynamoDBClient with a
 * request timeout that throws): 20 keys × 20 concurrent identical calls run each key once, and every call gets that
 * run's value.
 */
import { randomUUID } from 'node:crypto';
import { idempotent } from 'oncely';
import { DynamoDbStore } from 'oncely/dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Backend, returnItemOnRefusal, startDynalite } from './support/dynalite.js';

let backend: Backend;
beforeAll(async () => {
  returnItemOnRefusal(true);
  backend = await startDynalite();
});
afterAll(async () => {
  await backend?.close();
});

describe('idempotent() on DynamoDbStore', () => {
  it('20 keys × 20 concurrent identical calls: each key runs once, every call gets its value', async () => {
    const client = backend.newClient({
      requestHandler: { requestTimeout: 30_000, throwOnRequestTimeout: true },
    });
    const store = new DynamoDbStore({ client, table: 'oncely_keys' });
    const runs = new Map<string, number>();
    const pay = idempotent(
      async (order: { id: string; amount: number }) => {
        runs.set(order.id, (runs.get(order.id) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { id: order.id, paid: order.amount, run: randomUUID() };
      },
      {
        store,
        key: (order) => order.id,
        scope: 'pay',
        waitMs: 60_000,
        // dynalite carries 100–200 writes/s on this 2-core machine: 400 calls at once queue there for seconds,
        // far past the 2 s default, which DynamoDB itself never comes near.
        storeTimeoutMs: 30_000,
      },
    );
    const ids = Array.from({ length: 20 }, () => `order-${randomUUID()}`);
    const calls = ids.flatMap((id) => Array.from({ length: 20 }, () => pay({ id, amount: 1999 })));
    const results = await Promise.all(calls);
    for (const id of ids) expect(runs.get(id), id).toBe(1);
    for (const [index, result] of results.entries()) {
      const first = results[Math.floor(index / 20) * 20];
      expect(result).toEqual(first);
    }
  });
});
