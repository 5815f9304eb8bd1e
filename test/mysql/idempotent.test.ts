/**
 * `idempotent()` on MySqlStore made as docs/stores/mysql.md shows (a mysql2/promise pool, `new MySqlStore({ pool,
 * table })`, `migrate()`), plain and transactional: 20 keys × 20 concurrent identical calls run each key once, and
 * every call gets that run's value.
 */
import { randomUUID } from 'node:crypto';
import mysql from 'mysql2/promise';
import { idempotent, type Store } from 'oncely';
import { MySqlStore } from 'oncely/mysql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireService, services } from '../support/services.js';
import { dropTable, uniqueTable } from './support.js';

const pool = mysql.createPool({ uri: services.mariadb.url });
const table = uniqueTable('idempotent');
const store = new MySqlStore({ pool, table });

beforeAll(async () => {
  await requireService('mariadb');
  await store.migrate();
});
afterAll(async () => {
  await dropTable(pool, table);
  await pool.end();
});

async function storm(over: Store, scope: string) {
  const runs = new Map<string, number>();
  const pay = idempotent(
    async (order: { id: string; amount: number }) => {
      runs.set(order.id, (runs.get(order.id) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { id: order.id, paid: order.amount, run: randomUUID() };
    },
    { store: over, key: (order) => order.id, scope, waitMs: 30_000 },
  );
  const ids = Array.from({ length: 20 }, () => `order-${randomUUID()}`);
  const results = await Promise.all(
    ids.flatMap((id) => Array.from({ length: 20 }, () => pay({ id, amount: 1999 }))),
  );
  for (const id of ids) expect(runs.get(id), id).toBe(1);
  for (const [index, result] of results.entries())
    expect(result).toEqual(results[Math.floor(index / 20) * 20]);
}

describe('idempotent() on MySqlStore', () => {
  it('plain: 20 keys × 20 concurrent identical calls, each key runs once, every call gets its value', async () => {
    await storm(store, 'pay-plain');
  });

  it('transactional: the same storm, each key once', async () => {
    await storm(store.transactional(), 'pay-transactional');
  });
});
