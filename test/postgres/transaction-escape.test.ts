import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotent, isTransactionEscapedError, TransactionEscapedError } from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { watchTransaction } from '../../src/stores/postgres/transaction-watch.js';
import { requireService } from '../support/services.js';
import { createTestSchema, DATABASE_URL, type TestSchema } from './support.js';

// Transactional mode hands the handler the claim's open transaction. A handler (or a helper it calls) that runs
// transaction statements of its own on it commits the key's record as "in progress" together with its writes:
// before this guard, the retry after the lease ran the effect a second time. Now the claim refuses loudly, and an
// escape that committed keeps the key as that failure (issue 23; every form: transaction-escape-forms.test.ts).

let db: TestSchema;
let store: PostgresStore;
let payments: string;

beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('escape');
  store = new PostgresStore({ pool: db.pool, schema: db.schema });
  payments = db.table('payments');
  await db.pool.query(`CREATE TABLE ${payments} (id text NOT NULL)`);
});
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const rowsFor = async (id: string) =>
  Number((await db.pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);

type Client = ReturnType<typeof transactionOf>;

/** A payment whose handler runs `steps` on the handed-out connection around its INSERT. */
function payWith(scope: string, steps: (client: Client, insert: () => Promise<unknown>) => Promise<void>) {
  let runs = 0;
  const pay = idempotent(
    async (id: string, context) => {
      runs += 1;
      const client = transactionOf(context);
      await steps(client, () => client.query(`INSERT INTO ${payments} (id) VALUES ($1)`, [id]));
      return { paid: id };
    },
    { store: store.transactional(), scope, key: (id) => id, leaseMs: 60_000 },
  );
  return { pay, runs: () => runs, record: (id: string) => store.get(scopedKey(`fn:${scope}`, id)) };
}

describe('a transactional handler that ends the transaction itself', () => {
  it('BEGIN / INSERT / COMMIT in a helper, then a throw: TransactionEscapedError, now and on every retry', async () => {
    const { pay, runs, record } = payWith('helper-commits', async (client, insert) => {
      await client.query('BEGIN');
      await insert();
      await client.query('COMMIT');
      throw new Error('the card was declined after the helper committed');
    });
    const error = await pay('e1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionEscapedError);
    expect(isTransactionEscapedError(error)).toBe(true);
    expect((error as TransactionEscapedError).code).toBe('ONCELY_TRANSACTION_ESCAPED');
    expect((error as TransactionEscapedError).keyOutcome).toBe('terminal');
    // The helper's COMMIT had made the claim durable as "in progress": left so, every retry got 409 for the whole
    // lease (60 s here) and then ran the effect again by takeover; released, every retry ran it again at once.
    expect((await record('e1'))?.state).toBe('completed');
    expect(await rowsFor('e1')).toBe(1);
    const again = await pay('e1').catch((e: unknown) => e);
    expect(again).toBeInstanceOf(TransactionEscapedError);
    expect(again).toMatchObject({ replayed: true, keyOutcome: 'terminal' });
    expect(runs()).toBe(1);
    expect(await rowsFor('e1')).toBe(1);
  });

  it('a bare COMMIT and a handler that returns: its outcome is refused, the escape is stored instead', async () => {
    const { pay, record } = payWith('bare-commit', async (client, insert) => {
      await insert();
      await client.query('COMMIT');
    });
    await expect(pay('e2')).rejects.toBeInstanceOf(TransactionEscapedError);
    const stored = await record('e2');
    expect(stored?.state).toBe('completed');
    expect(stored?.outcome?.headers).toEqual([[':oncely', 'transaction-escaped']]);
    expect(Buffer.from(stored!.outcome!.body).toString()).not.toContain('e2');
  });

  it('COMMIT then BEGIN (a new transaction, no warning from PostgreSQL) is caught too', async () => {
    const { pay, record } = payWith('commit-begin', async (client, insert) => {
      await client.query('COMMIT');
      await client.query('BEGIN');
      await insert();
    });
    await expect(pay('e3')).rejects.toBeInstanceOf(TransactionEscapedError);
    expect((await record('e3'))?.state).toBe('completed');
    // The handler's own transaction was still open: it was rolled back with the refusal, not committed.
    expect(await rowsFor('e3')).toBe(0);
  });

  it('a ROLLBACK of its own undoes the claim with it; the refusal still says so', async () => {
    const { pay, runs } = payWith('own-rollback', async (client, insert) => {
      await insert();
      await client.query('ROLLBACK');
    });
    await expect(pay('e4')).rejects.toMatchObject({ keyOutcome: 'released' });
    expect(await rowsFor('e4')).toBe(0);
    await expect(pay('e4')).rejects.toBeInstanceOf(TransactionEscapedError);
    expect(runs()).toBe(2);
  });

  it('savepoints, failed statements and notices are the handler’s to use: no refusal, one commit', async () => {
    const { pay, record } = payWith('savepoints', async (client, insert) => {
      await client.query('SAVEPOINT nested');
      await insert();
      await client.query('RELEASE SAVEPOINT nested');
      await client.query('SAVEPOINT risky');
      await client.query('SELECT 1 / 0').catch(() => undefined);
      await client.query('ROLLBACK TO SAVEPOINT risky');
      // Notices of its own (a RAISE, an IF NOT EXISTS) are no transaction control either.
      await client.query(`DO $$ BEGIN RAISE NOTICE 'charging'; END $$`);
      await client.query(`CREATE TEMP TABLE IF NOT EXISTS scratch (n int)`);
      await client.query(`CREATE TEMP TABLE IF NOT EXISTS scratch (n int)`);
    });
    expect(await pay('e5')).toEqual({ paid: 'e5' });
    expect((await record('e5'))?.state).toBe('completed');
    expect(await rowsFor('e5')).toBe(1);
  });
});

describe('watchTransaction on a driver that hides its protocol stream (pg-native)', () => {
  it('falls back to PostgreSQL’s warnings: BEGIN inside the transaction, COMMIT outside one', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      // The same client, seen without `connection`, as pg-native's client is.
      const native = new Proxy(client, {
        get: (target, name) => {
          if (name === 'connection') return undefined;
          const value: unknown = Reflect.get(target, name, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      await client.query('BEGIN');
      const nested = watchTransaction(native);
      await client.query('SELECT 1');
      expect(nested.escaped).toBe(false);
      await client.query('BEGIN');
      expect(nested.escaped).toBe(true);
      nested.stop();
      await client.query('COMMIT');
      const outside = watchTransaction(native);
      await client.query('COMMIT');
      expect(outside.escaped).toBe(true);
      outside.stop();
    } finally {
      await client.end();
    }
  });
});
