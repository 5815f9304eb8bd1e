import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dashboard, dashboard } from '../../src/dashboard/index.js';
import { requireService } from '../support/services.js';
import { postgresEnv, redisEnv, type SeededOutbox, seedOutbox, serve, testPool } from './support/env.js';
import { type Seeded, seed } from './support/seed.js';

// Each guard of the dashboard, over real HTTP against real stores: every case here fails when its guard is
// removed (docs/dashboard.md lists which). The browser tests repeat the ones a browser is needed for.
const TOKEN = 'guard-test-token-0123456789';
const pool = testPool();
let pg: Awaited<ReturnType<typeof postgresEnv>>;
let redis: Awaited<ReturnType<typeof redisEnv>>;
let seededPg: Seeded;
let seededRedis: Seeded;
let seededOutbox: SeededOutbox;
const servers: { close: () => Promise<void> }[] = [];

async function served(board: Dashboard): Promise<string> {
  const server = await serve(board.node);
  servers.push(server);
  return server.url;
}

beforeAll(async () => {
  await requireService('postgres');
  await requireService('redis');
  pg = await postgresEnv(pool);
  redis = await redisEnv();
  seededPg = await seed(pg.store, pg.log);
  seededRedis = await seed(redis.store, redis.log);
  seededOutbox = await seedOutbox(pool, pg.schema);
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await pg?.drop();
  await redis?.drop();
  await pool.end();
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const deadState = async (id: string) =>
  (await pool.query(`SELECT state FROM "${pg.schema}".oncely_outbox WHERE id = $1`, [id])).rows[0]?.state;

describe('actions', () => {
  let url: string;
  beforeAll(async () => {
    url = await served(
      dashboard({ source: { postgres: pool, schema: pg.schema }, token: TOKEN, actions: true }),
    );
  });

  it('are refused without the token, and with a wrong one; nothing changes', async () => {
    const id = seededOutbox.dead[0]!;
    const missing = await post(`${url}/api/actions/discard`, { ids: [id] });
    expect(missing.status).toBe(401);
    const wrong = await post(`${url}/api/actions/discard`, { ids: [id] }, { 'x-oncely-token': `${TOKEN}x` });
    expect(wrong.status).toBe(403);
    expect(await deadState(id)).toBe(2);
  });

  it('are refused from another origin or site, even with the token', async () => {
    const id = seededOutbox.dead[0]!;
    const withToken = { 'x-oncely-token': TOKEN };
    const origin = await post(
      `${url}/api/actions/discard`,
      { ids: [id] },
      { ...withToken, origin: 'http://evil.example' },
    );
    expect(origin.status).toBe(403);
    expect(await origin.json()).toMatchObject({ message: expect.stringContaining('cross-origin') });
    const site = await post(
      `${url}/api/actions/discard`,
      { ids: [id] },
      { ...withToken, 'sec-fetch-site': 'cross-site' },
    );
    expect(site.status).toBe(403);
    const sameSite = await post(
      `${url}/api/actions/discard`,
      { ids: [id] },
      { ...withToken, 'sec-fetch-site': 'same-site' },
    );
    expect(sameSite.status).toBe(403);
    expect(await deadState(id)).toBe(2);
  });

  it('take POST with a JSON body only', async () => {
    const id = seededOutbox.dead[0]!;
    const get = await fetch(`${url}/api/actions/discard?ids=${id}`, { headers: { 'x-oncely-token': TOKEN } });
    expect(get.status).toBe(405);
    // What an HTML form can send: no custom header needed, so it would cross sites without a preflight.
    const form = await fetch(`${url}/api/actions/discard`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-oncely-token': TOKEN },
      body: JSON.stringify({ ids: [id] }),
    });
    expect(form.status).toBe(415);
    expect(await deadState(id)).toBe(2);
  });

  it('run with the token from the same origin (a same-origin Origin header is accepted)', async () => {
    const id = seededOutbox.dead[1]!;
    const response = await post(
      `${url}/api/actions/replay`,
      { ids: [id] },
      {
        'x-oncely-token': TOKEN,
        origin: url,
        'sec-fetch-site': 'same-origin',
      },
    );
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, count: 1 });
    expect(await deadState(id)).toBe(0);
  });

  it('release a stuck key with its current token, and delete a key', async () => {
    const headers = { 'x-oncely-token': TOKEN };
    const released = await post(`${url}/api/actions/release`, { key: seededPg.stuck }, headers);
    expect(released.status, await released.clone().text()).toBe(200);
    expect((await pg.store.get(seededPg.stuck))?.state).toBe('released');
    const deleted = await post(`${url}/api/actions/delete`, { key: seededPg.stuck }, headers);
    expect(deleted.status).toBe(200);
    expect(await pg.store.get(seededPg.stuck)).toBeUndefined();
  });
});

describe('actions off', () => {
  it('refuses every action, even with the token, when actions are not enabled', async () => {
    const url = await served(dashboard({ source: { postgres: pool, schema: pg.schema }, token: TOKEN }));
    const id = seededOutbox.dead[0]!;
    const response = await post(`${url}/api/actions/discard`, { ids: [id] }, { 'x-oncely-token': TOKEN });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ message: expect.stringContaining('actions are off') });
    expect(await deadState(id)).toBe(2);
    const snapshot = await (await fetch(`${url}/api/snapshot`)).json();
    expect(snapshot.actions).toBe(false);
  });

  it('cannot be turned on without a token, nor with a short one', () => {
    expect(() => dashboard({ source: { postgres: pool }, actions: true })).toThrow(/needs a token/);
    expect(() => dashboard({ source: { postgres: pool }, token: 'short', actions: true })).toThrow(
      /at least 16/,
    );
  });
});

describe('reads', () => {
  it('need the token when readsNeedToken is set (the page shell holds no data and stays open)', async () => {
    const url = await served(
      dashboard({ source: { postgres: pool, schema: pg.schema }, token: TOKEN, readsNeedToken: true }),
    );
    expect((await fetch(`${url}/api/snapshot`)).status).toBe(401);
    expect((await fetch(`${url}/api/key?hashed=${seededPg.completed.hashed}`)).status).toBe(401);
    expect((await fetch(`${url}/api/snapshot`, { headers: { 'x-oncely-token': TOKEN } })).status).toBe(200);
    expect((await fetch(`${url}/`)).status).toBe(200);
  });

  it('answer only the allowed Host names (DNS rebinding to 127.0.0.1 finds nothing)', async () => {
    const board = dashboard({ source: { postgres: pool, schema: pg.schema }, allowedHosts: ['127.0.0.1:1'] });
    const response = await board.fetch(
      new Request('http://rebound.example:8080/api/snapshot', { headers: { host: 'rebound.example:8080' } }),
    );
    expect(response.status).toBe(421);
    const allowed = await board.fetch(
      new Request('http://127.0.0.1:1/api/snapshot', { headers: { host: '127.0.0.1:1' } }),
    );
    expect(allowed.status).toBe(200);
  });

  it('send a policy that runs only the page script, never framed, never cached', async () => {
    const url = await served(dashboard({ source: { postgres: pool, schema: pg.schema } }));
    const page = await fetch(`${url}/`);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect((await fetch(`${url}/api/snapshot`)).headers.get('cache-control')).toBe('no-store');
  });
});

describe('stored bodies and payloads', () => {
  for (const kind of ['redis', 'postgres'] as const) {
    it(`${kind}: never leave the store in lists, snapshots or lookups; only when one key's body is asked for`, async () => {
      const seeded = kind === 'redis' ? seededRedis : seededPg;
      const source =
        kind === 'redis'
          ? { redis: redis.client, prefix: redis.prefix }
          : { postgres: pool, schema: pg.schema };
      const url = await served(dashboard({ source, outbox: { pool, schema: pg.schema } }));
      const texts = await Promise.all(
        [
          '/',
          '/app.js',
          '/api/snapshot',
          `/api/key?hashed=${seeded.completed.hashed}`,
          `/api/key?${new URLSearchParams({ scope: seeded.completed.scope, key: seeded.completed.key })}`,
        ].map(async (path) => (await fetch(`${url}${path}`)).text()),
      );
      for (const text of texts) {
        expect(text).not.toContain(seeded.bodyMarker);
        expect(text).not.toContain('PAYLOAD-SECRET');
      }
      const detail = JSON.parse(texts[4]!);
      expect(detail).toMatchObject({ found: true, outcome: { status: 201 } });
      expect(detail.outcome.bodyBytes).toBeGreaterThan(0);
      const body = await (await fetch(`${url}/api/key/body?hashed=${seeded.completed.hashed}`)).json();
      expect(body.text).toContain(seeded.bodyMarker);
    });
  }
});
