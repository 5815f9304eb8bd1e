import { randomBytes } from 'node:crypto';
import express from 'express';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency as expressIdempotency } from '../../src/http/express.js';
import { idempotency as honoIdempotency } from '../../src/http/hono.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { closing, listening } from '../support/listen.js';
import { requireService, services } from '../support/services.js';
import { socketClient } from './support/harness.js';

let pool: pg.Pool;
const schema = `oncely_test_unmigrated_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  await requireService('postgres');
  pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
  pool.on('error', () => {});
  // The schema exists, the table does not: a deploy that forgot `oncely migrate`.
  await pool.query(`CREATE SCHEMA "${schema}"`);
});

afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool?.end();
});

const headers = { 'idempotency-key': 'k', 'content-type': 'application/json', authorization: 'Bearer a' };

/**
 * A 503 says why in the operator's log: once per cause (the SQLSTATE, the driver's error code), not once per
 * request, with the fix where there is one; nothing needs `onEvent` for it.
 */
describe('the logger is told why the store fails', () => {
  it('express on an unmigrated PostgreSQL: one warning with SQLSTATE 42P01 and the migrate hint, however many 503s', async () => {
    const warnings: string[] = [];
    const app = express();
    app.use(express.json());
    const store = new PostgresStore({ pool, schema });
    app.post('/p', expressIdempotency({ store, logger: { warn: (m) => warnings.push(m) } }), (_req, res) => {
      res.status(201).json({});
    });
    const server = app.listen(0, '127.0.0.1');
    const request = socketClient(`http://127.0.0.1:${await listening(server)}`);
    try {
      for (let index = 0; index < 4; index++) {
        const answer = await request({ path: '/p', headers, body: '{}' });
        expect(answer.status).toBe(503);
      }
      expect(warnings, warnings.join('\n')).toHaveLength(1);
      expect(warnings[0]).toMatch(/^oncely\/express: the idempotency store failed/);
      expect(warnings[0]).toContain('42P01');
      expect(warnings[0]).toContain('oncely migrate');
      expect(warnings[0]).toMatch(/503/);
    } finally {
      await closing(server)();
    }
  });

  it('hono on a Redis nobody listens on: one warning that the store cannot be reached, whatever the driver says; console by default', async () => {
    await requireService('redis');
    const client = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    const warnings: string[] = [];
    const original = console.warn;
    console.warn = (message: string) => warnings.push(message);
    try {
      // No logger option: console.warn is the default.
      const app = new Hono();
      app.post('/p', honoIdempotency({ store: new RedisStore({ client }), breaker: false }), (c) =>
        c.json({}, 201),
      );
      for (let index = 0; index < 3; index++) {
        const answer = await app.request('/p', { method: 'POST', headers, body: '{}' });
        expect(answer.status).toBe(503);
      }
      expect(warnings, warnings.join('\n')).toHaveLength(1);
      expect(warnings[0]).toMatch(/^oncely\/hono: the idempotency store failed/);
      expect(warnings[0]).toContain('the store cannot be reached: is it running, and is its address right?');
      // One sentence ends once: no "right?." (issue 23), whatever punctuation the hint or the driver ends with.
      expect(warnings[0]).not.toMatch(/[.?!]\./);
    } finally {
      console.warn = original;
      client.disconnect();
    }
  });
});
