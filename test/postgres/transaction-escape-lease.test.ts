import { describe, expect, it } from 'vitest';
import { idempotent, isTransactionEscapedError } from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { transactionOf } from '../../src/stores/postgres/index.js';
import { escapeFixture } from './escape-fixture.js';

// Issue 23, defect 4, the lease's end: a handler that commits the claim's transaction itself and then overruns its
// lease. The claim is ended at the lease's end (not settled by the handler), and the record the escape committed
// in progress must still become the key's terminal failure: left in progress, the next request after the lease
// would take it over and pay again.

const fixture = escapeFixture('escapelease');

// Short, so the test sees the lease end; the handler waits for its signal, never for a fixed time.
const LEASE_MS = 600;

const refusal = (call: Promise<unknown>) =>
  call.then(
    () => false,
    (error: unknown) => isTransactionEscapedError(error),
  );

async function settledRecord(id: string, scope: string) {
  const key = scopedKey(`fn:${scope}`, id);
  // The lease's end is handled in the background (nobody waits on it): poll, bounded.
  for (let i = 0; i < 200; i++) {
    const record = await fixture.store.get(key);
    if (record?.state !== 'inProgress') return record;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return fixture.store.get(key);
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
          await client.query(`INSERT INTO ${fixture.payments} (id) VALUES ($1)`, [paid]);
          await client.query(commit);
          if (!context.signal.aborted)
            await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
          return { paid };
        };
        const options = { scope, key: (paid: string) => paid, leaseMs: LEASE_MS };
        const call = async (paid: string): Promise<unknown> => {
          if (mode === 'own')
            return idempotent(handler, { ...options, store: fixture.store.transactional() })(paid);
          const client = await fixture.db.pool.connect();
          try {
            await client.query('BEGIN');
            const joined = idempotent(handler, {
              ...options,
              store: fixture.store.transactional({ client }),
            });
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
        fixture.advance(10 * LEASE_MS);
        expect(await refusal(call(id))).toBe(true);
        expect(runs).toBe(1);
        expect(await fixture.rowsFor(id)).toBe(1);
      });
    }
  });
}
