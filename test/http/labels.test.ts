/**
 * @module The label of a record made through HTTP, over real sockets on Express with the memory and Redis stores:
 * the method and the route template the metrics use (`POST /payments/:id`), never the path's ids, the client's
 * key or its `Authorization` value (all three are in the default scope, which the label is not).
 */
import assert from 'node:assert/strict';
import express, { type Response } from 'express';
import { afterAll, describe, it } from 'vitest';
import type { Store } from '../../src/core/store.js';
import { idempotency } from '../../src/http/express.js';
import { closing, listening } from '../support/listen.js';
import { memoryStore, redisStore } from '../support/stores.js';

const SECRET = 'Bearer sk_live_4f9a_secret_token';
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
});

/** An Express app with the layer on two routes and app-wide on a third; each answer says its record's id. */
async function start(store: Store): Promise<string> {
  const app = express();
  app.use(express.json());
  const idem = idempotency({ store });
  const id = (res: Response) => res.locals.idempotency?.id as string;
  app.post('/payments', idem, (_req, res) => {
    res.status(201).json({ record: id(res) });
  });
  app.post('/payments/:id/refunds', idem, (_req, res) => {
    res.status(201).json({ record: id(res) });
  });
  const server = app.listen(0, '127.0.0.1');
  closers.push(closing(server));
  return `http://127.0.0.1:${await listening(server)}`;
}

async function post(url: string, key: string): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key, authorization: SECRET },
    body: '{"amount":100}',
  });
  assert.equal(res.status, 201);
  return ((await res.json()) as { record: string }).record;
}

const redis = redisStore('labels');
for (const setup of [memoryStore, redis]) {
  describe(`HTTP record labels: Express, ${setup.name} store`, () => {
    it('a record made by POST /payments is labelled with the route, and holds no Authorization value', async () => {
      const store = await setup.create();
      const base = await start(store);
      const key = `order-${Math.random().toString(36).slice(2)}`;
      const id = await post(`${base}/payments`, key);
      assert.equal(await post(`${base}/payments`, key), id, 'a replay of the same record');
      const record = await store.get(id);
      assert.equal(record?.state, 'completed');
      assert.equal(record?.label, 'POST /payments');
      const seen = JSON.stringify(record?.label);
      for (const secret of ['sk_live', 'Bearer', key])
        assert.ok(!seen.includes(secret), `${secret} in ${seen}`);
    });

    it('the route template, never the ids in the path', async () => {
      const store = await setup.create();
      const base = await start(store);
      const id = await post(`${base}/payments/pay_8812/refunds`, `refund-${Math.random()}`);
      const record = await store.get(id);
      assert.equal(record?.label, 'POST /payments/:id/refunds');
    });
  });
}
