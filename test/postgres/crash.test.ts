import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotent } from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { requireService } from '../support/services.js';
import { createTestSchema, DATABASE_URL, type TestSchema } from './support.js';
import { PayProcesses } from './workers/processes.js';

// A process SIGKILLed in the middle of its transaction (business row inserted, key claimed, not committed):
// PostgreSQL rolls the transaction back when the connection drops, so neither the row nor the key exists, and a
// retry from another process executes exactly once.
let db: TestSchema;
let payments: string;

beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('crash', 3);
  payments = db.table('payments');
  await db.pool.query(
    `CREATE TABLE ${payments} (serial serial, id text NOT NULL, cents integer, worker integer)`,
  );
});
afterAll(async () => db?.drop());

const rowsFor = async (id: string) =>
  Number((await db.pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);

/** Waits until PostgreSQL has noticed the dead connection and ended its backend (rolling its transaction back). */
async function backendGone(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await db.pool.query('SELECT count(*) FROM pg_stat_activity WHERE pid = $1', [pid]);
    if (Number(rows[0].count) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`backend ${pid} is still there 5 s after its client was killed`);
}

describe('SIGKILL mid-transaction', () => {
  it('leaves neither the business row nor the key; a retry executes exactly once', async () => {
    const workers = new PayProcesses(1, { url: DATABASE_URL, schema: db.schema, payments, poolSize: 2 });
    try {
      expect(await workers.read()).toEqual(['ready']);
      workers.send('hang order-crash');
      const [inside] = await workers.read(0);
      expect(inside).toMatch(/^inside \d+$/);
      const backend = Number(inside!.split(' ')[1]);
      const child = workers.children[0]!;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      await backendGone(backend);
    } finally {
      await workers.stop();
    }
    const store = new PostgresStore({ pool: db.pool, schema: db.schema });
    const key = scopedKey('fn:pay', 'order-crash');
    expect(await rowsFor('order-crash')).toBe(0);
    expect(await store.get(key)).toBeUndefined();
    const { rows } = await db.pool.query(`SELECT count(*) FROM "${db.schema}".oncely_keys WHERE key = $1`, [
      key,
    ]);
    expect(Number(rows[0].count)).toBe(0);
    let runs = 0;
    const pay = idempotent(
      async (request: { key: string; cents: number }, context) => {
        runs += 1;
        await transactionOf(context).query(`INSERT INTO ${payments} (id, cents, worker) VALUES ($1, $2, 0)`, [
          request.key,
          request.cents,
        ]);
        return 'paid';
      },
      { store: store.transactional(), scope: 'pay', key: (request) => request.key, waitMs: 1_000 },
    );
    try {
      const retried = await pay.execute({ key: 'order-crash', cents: 100 });
      expect(retried).toEqual({ value: 'paid', replayed: false });
      expect((await pay.execute({ key: 'order-crash', cents: 100 })).replayed).toBe(true);
      expect(runs).toBe(1);
      expect(await rowsFor('order-crash')).toBe(1);
      const record = await store.get(key);
      expect(record?.state).toBe('completed');
      expect(record?.attempt).toBe(1);
    } finally {
      await store.close();
    }
  });
});
