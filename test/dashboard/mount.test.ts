/**
 * Test (dashboard): the handler mounted app-wide beside the application's own prefix guard, as docs/dashboard.md
 * allows. Whatever request-target reaches the server, the dashboard must claim a request only when the guard saw
 * the same path, so no spelling of the path reaches the data around the guard. Raw targets go over a real socket
 * (support/raw-request.ts): fetch would normalize them first.
 */
import type { AddressInfo } from 'node:net';
import { serve as serveFetch } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dashboard, dashboard } from '../../src/dashboard/index.js';
import { requireService } from '../support/services.js';
import { postgresEnv, serve, testPool } from './support/env.js';
import { type RawAnswer, rawGet } from './support/raw-request.js';
import { type Seeded, seed } from './support/seed.js';

const OPERATOR = 'operator-secret-0123456789';
const pool = testPool();
let pg: Awaited<ReturnType<typeof postgresEnv>>;
let seeded: Seeded;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  await requireService('postgres');
  pg = await postgresEnv(pool);
  seeded = await seed(pg.store, pg.log);
});

afterAll(async () => {
  for (const close of closers) await close();
  await pg?.drop();
  await pool.end();
});

const board = (): Dashboard =>
  dashboard({ source: { postgres: pool, schema: pg.schema }, basePath: '/ops/oncely' });

/** Every spelling of a dashboard path that a server, a guard or a URL parser might read differently. */
function bypasses(): string[] {
  const body = `api/key/body?hashed=${seeded.completed.hashed}`;
  return [
    '//x/ops/oncely/api/snapshot',
    `//x/ops/oncely/${body}`,
    '//x/ops/oncely/',
    '///ops/oncely/api/snapshot',
    '////x/ops/oncely/api/snapshot',
    '/\\x/ops/oncely/api/snapshot',
    '/\\/x/ops/oncely/api/snapshot',
    '/\\ops/oncely/api/snapshot',
    '/ops%2Foncely/api/snapshot',
    '/ops/oncely%2Fapi%2Fsnapshot',
    '/ops/oncely%2fapi/snapshot',
    '/%2Fops/oncely/api/snapshot',
    '/%2F/x/ops/oncely/api/snapshot',
    '/./ops/oncely/api/snapshot',
    '/ops/./oncely/api/snapshot',
    `/./ops/oncely/${body}`,
    '/ops/oncely/../oncely/api/snapshot',
    '/ops/x/../oncely/api/snapshot',
    '/x/../ops/oncely/api/snapshot',
    '/ops/oncely/.%2e/oncely/api/snapshot',
    '/ops/%6Fncely/api/snapshot',
    '/ops/oncely/api/snapshot#x',
    'http://x/ops/oncely/api/snapshot',
  ];
}

/** A request that got the dashboard's data: its snapshot, a record or a stored body. */
const reachedData = (answer: RawAnswer) =>
  answer.status === 200 ||
  answer.body.includes('"counts"') ||
  answer.body.includes(seeded.completed.hashed) ||
  answer.body.includes(seeded.bodyMarker);

describe('mounted app-wide beside a prefix guard', () => {
  let expressUrl: string;
  let honoUrl: string;

  beforeAll(async () => {
    const operatorsOnly: express.RequestHandler = (req, res, next) => {
      if (req.get('x-operator') === OPERATOR) next();
      else res.status(403).type('text').send('operators only');
    };
    const app = express();
    app.use('/ops/oncely', operatorsOnly);
    app.use(board().node);
    app.get('/ops/oncely-metrics', (_req, res) => {
      res.type('text').send('the application metrics');
    });
    app.use((_req, res) => {
      res.status(404).type('text').send('the application 404');
    });
    const server = await serve(app);
    expressUrl = server.url;
    closers.push(server.close);

    const hono = new Hono();
    const fetchBoard = board();
    hono.use('/ops/oncely/*', async (c, next) => {
      if (c.req.header('x-operator') !== OPERATOR) return c.text('operators only', 403);
      await next();
    });
    hono.all('*', (c) => fetchBoard.fetch(c.req.raw));
    const honoServer = serveFetch({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => honoServer.once('listening', resolve));
    honoUrl = `http://127.0.0.1:${(honoServer.address() as AddressInfo).port}`;
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          (honoServer as import('node:http').Server).closeAllConnections();
          honoServer.close(() => resolve());
        }),
    );
  });

  for (const kind of ['express', 'hono'] as const) {
    const url = () => (kind === 'express' ? expressUrl : honoUrl);

    it(`${kind}: the guard refuses the direct request and lets an operator through to the data`, async () => {
      const direct = await rawGet(url(), '/ops/oncely/api/snapshot');
      expect(direct.status).toBe(403);
      const operator = await rawGet(url(), '/ops/oncely/api/snapshot', { 'x-operator': OPERATOR });
      expect(operator.status).toBe(200);
      expect(reachedData(operator)).toBe(true);
      const body = await rawGet(url(), `/ops/oncely/api/key/body?hashed=${seeded.completed.hashed}`, {
        'x-operator': OPERATOR,
      });
      expect(body.body).toContain(seeded.bodyMarker);
    });

    it(`${kind}: no spelling of the path (//host, backslashes, %2F, dot segments) reaches the data around the guard`, async () => {
      const answers = await Promise.all(bypasses().map((target) => rawGet(url(), target)));
      const leaked = answers.filter(reachedData).map((a) => `${a.status} ${a.target}`);
      expect(leaked).toEqual([]);
    });
  }

  it('express: a path that only starts like the base path (/ops/oncely-metrics) goes on to the application', async () => {
    const metrics = await rawGet(expressUrl, '/ops/oncely-metrics');
    expect(metrics).toMatchObject({ status: 200, body: 'the application metrics' });
    const other = await rawGet(expressUrl, '/ops/oncelyx/api/snapshot');
    expect(other).toMatchObject({ status: 404, body: 'the application 404' });
  });
});

describe('below the base path, without a next handler', () => {
  it('node:http: a path that only starts like the base path gets the plain 404, not the dashboard', async () => {
    const server = await serve((req, res) => board().node(req, res));
    closers.push(server.close);
    const answer = await rawGet(server.url, '/ops/oncely-metrics');
    expect(answer).toMatchObject({ status: 404, body: 'not found' });
    const page = await rawGet(server.url, '/ops/oncely');
    expect(page.status).toBe(200);
  });

  it('fetch: the same', async () => {
    const fetchBoard = board();
    const answer = await fetchBoard.fetch(new Request('http://127.0.0.1/ops/oncely-metrics'));
    expect(answer.status).toBe(404);
    expect(await answer.text()).toBe('not found');
    expect((await fetchBoard.fetch(new Request('http://127.0.0.1/ops/oncely'))).status).toBe(200);
  });
});
