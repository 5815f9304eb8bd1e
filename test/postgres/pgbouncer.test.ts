import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProgressError, idempotent } from '../../src/index.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { requireService } from '../support/services.js';
import { type PgBouncer, pgbouncerInstalled, startPgBouncer } from './pgbouncer.js';
import { createTestSchema, type TestSchema } from './support.js';

// Everything but LISTEN through PgBouncer in transaction-pooling mode (a server connection per transaction,
// not per client): the one-statement transitions, the `BEGIN; claim` message of transactional mode, rollbacks,
// and waiting duplicates. 40 client connections share 4 server connections.
let db: TestSchema;
let bouncer: PgBouncer;
let pool: pg.Pool;
let payments: string;

describe.runIf(pgbouncerInstalled())('through PgBouncer', () => {
  beforeAll(async () => {
    await requireService('postgres');
    db = await createTestSchema('bouncer', 2);
    payments = db.table('payments');
    await db.pool.query(`CREATE TABLE ${payments} (id text NOT NULL, cents integer)`);
    bouncer = await startPgBouncer(4);
    pool = new pg.Pool({ connectionString: bouncer.url, max: 40 });
    pool.on('error', () => {});
  }, 30_000);
  afterAll(async () => {
    await pool?.end();
    await bouncer?.stop();
    await db?.drop();
  });

  runStoreConformance({
    name: 'PostgresStore through PgBouncer (transaction pooling, listen: false)',
    harness: { describe, it },
    createStore: ({ clock }) =>
      new PostgresStore({ pool, schema: db.schema, clock, listen: false, prepare: false }),
    propertyRuns: 30,
    stormSize: 500,
  });

  const rowsFor = async (id: string) =>
    Number((await db.pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);

  describe('transactional mode through PgBouncer', () => {
    function payments_(waitMs: number, hold: Promise<void> = Promise.resolve(), fail = false) {
      let runs = 0;
      const store = new PostgresStore({ pool, schema: db.schema, listen: false, prepare: false });
      const pay = idempotent(
        async (id: string, context) => {
          runs += 1;
          await transactionOf(context).query(`INSERT INTO ${payments} (id, cents) VALUES ($1, 1)`, [id]);
          await hold;
          if (fail) throw new Error('declined');
          return `paid ${id}`;
        },
        { store: store.transactional(), scope: 'bouncer', key: (id) => id, waitMs },
      );
      return { pay, runs: () => runs };
    }

    it('commits row and key together, replays, and rolls both back on a throw', async () => {
      const failing = payments_(0, Promise.resolve(), true);
      await expect(failing.pay('b1')).rejects.toThrow('declined');
      expect(await rowsFor('b1')).toBe(0);
      const { pay, runs } = payments_(0);
      expect(await pay.execute('b1')).toEqual({ value: 'paid b1', replayed: false });
      expect(await pay.execute('b1')).toEqual({ value: 'paid b1', replayed: true });
      expect(runs()).toBe(1);
      expect(await rowsFor('b1')).toBe(1);
    });

    it('200 concurrent duplicates: one row; waiting ones replay, the others are told in progress', async () => {
      let open!: () => void;
      const hold = new Promise<void>((resolve) => {
        open = resolve;
      });
      const waiting = payments_(10_000, hold);
      const impatient = payments_(0, hold);
      const calls = [
        ...Array.from({ length: 100 }, () => waiting.pay.execute('b2')),
        ...Array.from({ length: 100 }, () => impatient.pay.execute('b2').catch((e: unknown) => e)),
      ];
      setTimeout(open, 300);
      const results = await Promise.all(calls);
      expect(waiting.runs() + impatient.runs()).toBe(1);
      expect(await rowsFor('b2')).toBe(1);
      const replayed = results.filter((r) => (r as { replayed?: boolean }).replayed === true).length;
      const inProgress = results.filter((r) => r instanceof InProgressError).length;
      expect(replayed + inProgress).toBe(199);
      expect(replayed).toBeGreaterThanOrEqual(99);
    });

    it('waitFor works by polling when LISTEN is left on behind the pooler', async () => {
      const store = new PostgresStore({
        pool,
        schema: db.schema,
        listen: true,
        pollIntervalMs: 50,
        prepare: false,
      });
      try {
        const claim = await store.begin({
          key: 'b3',
          fingerprint: 'f',
          leaseMs: 10_000,
          retentionMs: 60_000,
        });
        if (claim.kind !== 'acquired') throw new Error(claim.kind);
        const waiting = store.waitFor('b3', { timeoutMs: 10_000 });
        await new Promise((resolve) => setTimeout(resolve, 50));
        await store.release({ key: 'b3', token: claim.token });
        expect(await waiting).toBe(true);
      } finally {
        await store.close();
      }
    });
  });
});
