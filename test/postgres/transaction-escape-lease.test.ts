import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotent, isTransactionEscapedError } from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { requireService } from '../support/services.js';
import { createTestSchema, type TestSchema } from './support.js';

// Issue 23, defect 4, the lease's end: a handler that commits the claim's transaction itself and then overruns its
// lease. The claim is ended at the lease's end (not settled by the handler), and the record the escape committed
// in progress must still become the key's terminal failure: left in progress, the next request after the lease
// would take it over and pay again.

let db: TestSchema;
let payments: string;
// The stores' clock: moved past the lease so that a retry "after the lease" would take an in-progress key over.
let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
let store: PostgresStore;

beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('escapelease');
  store = new PostgresStore({ pool: db.pool, schema: db.schema, clock });
  payments = db.table('payments');
  await db.pool.query(`CREATE TABLE ${payments} (id text NOT NULL)`);
});
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

// Short, so the test sees the lease end; the handler waits for its signal, never for a fixed time.
const LEASE_MS = 600;

const rowsFor = async (id: string) =>
  Number((await db.pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);

const refusal = (call: Promise<unknown>) =>
  call.then(
    () => false,
    (error: unknown) => isTransactionEscapedError(error),
  );

async function settledRecord(id: string, scope: string) {
  const key = scopedKey(`fn:${scope}`, id);
  // The lease's end is handled in the background (nobody waits on it): poll, bounded.
  for (let i = 0; i < 200; i++) {
    const record = await store.get(key);
    if (record?.state !== 'inProgress') return record;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return store.get(key);
}

for (const mode of ['own', 'joined'] as const) {
  describe(mode === 'own' ? 'the store’s own transaction' : 'the caller’s transaction, joined', () => {
    for (const commit of ['COMMIT', 'COMMIT AND CHAIN']) {
      it(`${commit}, then the handler overruns its lease: the key keeps the failure, no retry pays again`, async () => {
        const scope = `lease-${mode}-${commit.length}`;
        const id = `${scope}-p`;
        let runs = 0;
        const handler = async (
          paid: string,
          context: { readonly signal: AbortSignal; transaction?: unknown },
        ) => {
          runs += 1;
          const client = transactionOf(context);
          await client.query(`INSERT INTO ${payments} (id) VALUES ($1)`, [paid]);
          await client.query(commit);
          if (!context.signal.aborted)
            await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
          return { paid };
        };
        const options = { scope, key: (paid: string) => paid, leaseMs: LEASE_MS };
        const call = async (paid: string): Promise<unknown> => {
          if (mode === 'own') return idempotent(handler, { ...options, store: store.transactional() })(paid);
          const client = await db.pool.connect();
          try {
            await client.query('BEGIN');
            const joined = idempotent(handler, { ...options, store: store.transactional({ client }) });
            const paidNow = await joined(paid);
            await client.query('COMMIT');
            return paidNow;
          } catch (error) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw error;
          } finally {
            client.release();
          }
        };

        // The attempt itself fails (its lease was lost); what matters is what the key keeps.
        await expect(call(id)).rejects.toThrow();
        expect((await settledRecord(id, scope))?.state).toBe('completed');
        expect(await refusal(call(id))).toBe(true);
        offsetMs += 10 * LEASE_MS;
        expect(await refusal(call(id))).toBe(true);
        expect(runs).toBe(1);
        expect(await rowsFor(id)).toBe(1);
      });
    }
  });
}
