import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, InProgressError, isStoreUnavailableError } from '../../src/index.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { requireService } from '../support/services.js';
import { createTestSchema, DATABASE_URL, type TestSchema } from './support.js';

// A database (or role) whose default isolation is stricter than read committed: the store's own one-statement
// transitions meet concurrent writers of their row as serialization failures (40001). Those are races between
// duplicates, not an outage: no caller may see StoreUnavailableError, and the circuit must stay closed.
let db: TestSchema;
beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('isolation');
});
afterAll(async () => {
  await db?.drop();
});

describe.each(['repeatable read', 'serializable'])(
  'plain store under default_transaction_isolation = %s',
  (level) => {
    it('bursts of concurrent duplicates: one execution per key, no store failure, the circuit stays closed', async () => {
      const url = new URL(DATABASE_URL);
      url.searchParams.set('options', `-c default_transaction_isolation=${level.replace(' ', '\\ ')}`);
      const pool = new pg.Pool({ connectionString: url.toString(), max: 16 });
      pool.on('error', () => {});
      try {
        const { rows } = await pool.query('SHOW default_transaction_isolation');
        expect(rows[0].default_transaction_isolation).toBe(level);
        const store = new PostgresStore({ pool, schema: db.schema, listen: false });
        const failures: unknown[] = [];
        const engine = new Engine({
          store,
          onEvent: (event) => event.type === 'storeError' && failures.push(event),
        });
        let executions = 0;
        let unavailable = 0;
        for (let burst = 0; burst < 20; burst++) {
          const key = `${level}-${burst}`;
          await Promise.all(
            Array.from({ length: 16 }, () =>
              engine
                .execute({
                  key,
                  fingerprint: 'f',
                  waitMs: 2_000,
                  run: async () => {
                    executions += 1;
                    await new Promise((resolve) => setTimeout(resolve, 5));
                    return 'paid';
                  },
                  settle: () => ({
                    keep: true,
                    outcome: { status: 200, headers: [], body: Buffer.from('paid') },
                  }),
                })
                .catch((error: unknown) => {
                  if (isStoreUnavailableError(error)) unavailable += 1;
                  else if (!(error instanceof InProgressError)) throw error;
                }),
            ),
          );
        }
        expect(unavailable).toBe(0);
        expect(failures).toEqual([]);
        expect(executions).toBe(20);
      } finally {
        await pool.end();
      }
    });
  },
);
