import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency } from '../../src/http/express.js';
import { Inbox, isTransactionEscapedError } from '../../src/index.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { socketClient } from '../http/support/harness.js';
import { closing, listening } from '../support/listen.js';
import { requireService } from '../support/services.js';
import { createTestSchema, type TestSchema } from './support.js';

// Issue 23, defect 4, at the entry points other than idempotent() (transaction-escape-forms.test.ts): over HTTP an
// escaped transaction is the documented 500 `transaction-escaped` problem on the attempt, on an immediate retry and
// on a retry after the lease, and the handler runs once; the inbox parks the message with the error.

let db: TestSchema;
let payments: string;
let offsetMs = 0;
let store: PostgresStore;

beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('escape_entry', 4);
  store = new PostgresStore({ pool: db.pool, schema: db.schema, clock: () => Date.now() + offsetMs });
  payments = db.table('payments');
  await db.pool.query(`CREATE TABLE ${payments} (id text NOT NULL)`);
});
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const rowsFor = async (id: string) =>
  Number((await db.pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);

const LEASE_MS = 60_000;

describe('oncely/express on a transactional store, a handler that escapes', () => {
  // How the handler answers after `COMMIT AND CHAIN` (which PostgreSQL reports nowhere): a kept 201, a 503 the
  // policy does not keep (a rollback), and a thrown error (the framework's error path).
  for (const answer of ['201', '503', 'throw'] as const) {
    it(`then answers ${answer}: 500 transaction-escaped now, on a retry and after the lease; one run`, async () => {
      let runs = 0;
      const app = express();
      app.post(
        '/pay',
        idempotency({ store: store.transactional(), leaseMs: LEASE_MS }),
        async (_req, res, next) => {
          runs += 1;
          const context = res.locals.idempotency!;
          const client = transactionOf(context);
          await client.query(`INSERT INTO ${payments} (id) VALUES ($1)`, [context.key]);
          await client.query('COMMIT AND CHAIN');
          if (answer === 'throw') return next(new Error('declined after the escape'));
          res.status(Number(answer)).json({ paid: context.key });
        },
      );
      const server = app.listen(0, '127.0.0.1');
      try {
        const send = socketClient(`http://127.0.0.1:${await listening(server)}`);
        const key = `http-${answer}`;
        const call = () => send({ path: '/pay', headers: { 'idempotency-key': key } });
        const first = await call();
        const again = await call();
        offsetMs += 2 * LEASE_MS;
        const late = await call();
        for (const response of [first, again, late]) {
          expect(response.status).toBe(500);
          expect(response.headers['content-type']).toBe('application/problem+json');
          expect(JSON.parse(response.body.toString())).toMatchObject({
            type: 'https://github.com/oncely/oncely/blob/main/docs/errors.md#transaction-escaped',
            status: 500,
            keyOutcome: 'terminal',
          });
        }
        expect(runs).toBe(1);
        expect(await rowsFor(key)).toBe(1);
      } finally {
        await closing(server)();
      }
    });
  }
});

describe('the inbox on a transactional store, a handler that escapes', () => {
  it('parks the message with the TransactionEscapedError, and parks its redeliveries without running', async () => {
    let runs = 0;
    const inbox = new Inbox(
      async (id: string, context) => {
        runs += 1;
        const client = transactionOf(context);
        await client.query(`INSERT INTO ${payments} (id) VALUES ($1)`, [id]);
        await client.query('COMMIT; BEGIN');
      },
      { store: store.transactional(), messageId: (id) => id, leaseMs: LEASE_MS },
    );
    const first = await inbox.handle('inbox-1');
    expect(first).toMatchObject({ kind: 'parked', first: true });
    expect(isTransactionEscapedError(first.kind === 'parked' ? first.error : undefined)).toBe(true);
    const redelivered = await inbox.handle('inbox-1', { redelivered: true });
    expect(redelivered).toMatchObject({ kind: 'parked', first: false });
    expect(isTransactionEscapedError(redelivered.kind === 'parked' ? redelivered.error : undefined)).toBe(
      true,
    );
    expect(runs).toBe(1);
    expect(await rowsFor('inbox-1')).toBe(1);
  });
});
