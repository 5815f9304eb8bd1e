import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency } from '../../src/http/express.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { createTestSchema, type TestSchema } from '../postgres/support.js';
import { closing, listening } from '../support/listen.js';
import { requireService } from '../support/services.js';
import { socketClient } from './support/harness.js';

let db: TestSchema;

beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('http_tx', 4);
  await db.pool.query(`CREATE TABLE ${db.table('payments')} (key text, amount int)`);
});

afterAll(async () => {
  await db?.drop();
});

/** `app` on a port of its own: a POST /payments with `key` and `amount`, and the rows the handler wrote for `key`. */
async function serve(app: express.Express, key: string, amount: number) {
  const server = app.listen(0, '127.0.0.1');
  const request = socketClient(`http://127.0.0.1:${await listening(server)}`);
  const send = () =>
    request({
      path: '/payments',
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ amount }),
    });
  const rows = async () =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM ${db.table('payments')} WHERE key = $1`, [key]))
      .rows[0].n as number;
  return { send, rows, close: closing(server) };
}

/**
 * Transactional mode over HTTP: the handler writes its effect through `idempotency.transaction`; the row and the
 * stored response commit together, and an answer that is not kept (5xx) rolls the row back with the claim.
 */
describe('oncely/express on PostgresStore.transactional()', () => {
  it('commits the effect with the stored response; a 5xx rolls both back and the retry runs clean', async () => {
    const store = new PostgresStore({ pool: db.pool, schema: db.schema }).transactional();
    const app = express();
    app.use(express.json());
    let failNext = true;
    app.post('/payments', idempotency({ store }), async (req, res) => {
      const context = res.locals.idempotency!;
      const client = transactionOf(context);
      await client.query(`INSERT INTO ${db.table('payments')} (key, amount) VALUES ($1, $2)`, [
        context.key,
        req.body.amount,
      ]);
      if (failNext) {
        failNext = false;
        res.status(503).json({ error: 'card network down' });
        return;
      }
      res.status(201).json({ charged: req.body.amount });
    });
    const { send, rows, close } = await serve(app, 'tx-1', 42);

    expect((await send()).status).toBe(503);
    expect(await rows()).toBe(0);
    const first = await send();
    expect(first.status).toBe(201);
    expect(await rows()).toBe(1);
    const replay = await send();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.equals(first.body)).toBe(true);
    expect(await rows()).toBe(1);
    await close();
  });

  it('answers 503, never the handler 2xx, when the commit fails: the effect rolled back, and the retry runs it once', async () => {
    const store = new PostgresStore({ pool: db.pool, schema: db.schema }).transactional();
    const app = express();
    app.use(express.json());
    let cutNext = true;
    app.post('/payments', idempotency({ store }), async (req, res) => {
      const context = res.locals.idempotency!;
      const client = transactionOf(context);
      const { rows } = await client.query(
        `INSERT INTO ${db.table('payments')} (key, amount) VALUES ($1, $2) RETURNING pg_backend_pid() AS pid`,
        [context.key, req.body.amount],
      );
      if (cutNext) {
        cutNext = false;
        // The transaction's connection dies after the effect was written, before the outcome is stored.
        await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      }
      res.status(201).json({ charged: req.body.amount });
    });
    const { send, rows, close } = await serve(app, 'tx-cut', 7);

    const cut = await send();
    expect(cut.status).toBe(503);
    expect(await rows()).toBe(0);
    const retry = await send();
    expect(retry.status).toBe(201);
    expect(await rows()).toBe(1);
    await close();
  });
});
