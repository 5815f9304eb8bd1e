import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve as serveFetch } from '@hono/node-server';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboard } from '../../src/dashboard/index.js';
import { RedisStreamsPublisher } from '../../src/messaging/brokers/redis-streams.js';
import { OutboxRelay, outboxStats } from '../../src/messaging/outbox/index.js';
import { requireService } from '../support/services.js';
import { type Browser, chromiumAvailable, launch } from './support/browser.js';
import {
  postgresEnv,
  redisEnv,
  type SeededOutbox,
  seedOutbox,
  serve,
  testPool,
  until,
} from './support/env.js';
import { type Seeded, seed } from './support/seed.js';

// The page in a real browser (headless Chromium) against real PostgreSQL and Redis holding known data: the numbers
// it shows are the stores', a dead letter replayed from it reaches the broker (Redis Streams), and the actions
// refuse a page without the token and requests another site makes.
const TOKEN = 'browser-test-token-0123456789';
const canRun = chromiumAvailable();

describe.skipIf(!canRun)('the dashboard in Chromium', () => {
  const pool = testPool();
  let pg: Awaited<ReturnType<typeof postgresEnv>>;
  let redis: Awaited<ReturnType<typeof redisEnv>>;
  let seededPg: Seeded;
  let seededRedis: Seeded;
  let outbox: SeededOutbox;
  let browser: Browser;
  let pgUrl: string;
  let redisUrl: string;
  const closers: (() => Promise<void>)[] = [];
  /** Every action request the PostgreSQL dashboard answered: which ones reached it, and what it said. */
  const actionLog: {
    method: string | undefined;
    status: number;
    site: string | undefined;
    origin: string | undefined;
  }[] = [];

  beforeAll(async () => {
    await requireService('postgres');
    await requireService('redis');
    pg = await postgresEnv(pool);
    redis = await redisEnv();
    seededPg = await seed(pg.store, pg.log);
    seededRedis = await seed(redis.store, redis.log);
    outbox = await seedOutbox(pool, pg.schema);
    browser = await launch();

    // PostgreSQL through the node:http handler at the root, with every action request recorded.
    const pgBoard = dashboard({ source: { postgres: pool, schema: pg.schema }, token: TOKEN, actions: true });
    const pgServer = await serve((req: IncomingMessage, res: ServerResponse) => {
      if (req.url?.startsWith('/api/actions/')) {
        res.once('finish', () =>
          actionLog.push({
            method: req.method,
            status: res.statusCode,
            site: req.headers['sec-fetch-site'] as string | undefined,
            origin: req.headers.origin,
          }),
        );
      }
      pgBoard.node(req, res);
    });
    pgUrl = pgServer.url;
    closers.push(pgServer.close);

    // Redis (and the same outbox) through the Fetch handler, mounted under a base path as an application would.
    const redisBoard = dashboard({
      source: { redis: redis.client, prefix: redis.prefix },
      // The machine's Redis is shared with every other test (tens of thousands of keys): the page's numbers are
      // exact only when the SCAN may walk all of them (scanLimit counts every key walked, not only records).
      scanLimit: 10_000_000,
      outbox: { pool, schema: pg.schema },
      basePath: '/ops/oncely',
    });
    const server = serveFetch({ fetch: redisBoard.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    redisUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops/oncely`;
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          (server as import('node:http').Server).closeAllConnections();
          server.close(() => resolve());
        }),
    );
  });

  afterAll(async () => {
    await browser?.close();
    for (const close of closers) await close();
    await pg?.drop();
    await redis?.drop();
    await pool.end();
  });

  async function open(url: string): Promise<Page> {
    const page = await browser.context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(url);
    await page.getByTestId('status').filter({ hasText: 'live' }).waitFor();
    return page;
  }
  const text = async (page: Page, id: string) => (await page.getByTestId(id).first().textContent()) ?? '';

  for (const kind of ['postgres', 'redis'] as const) {
    it(`${kind}: the keys, events and parked messages on the page are the store's`, async () => {
      const seeded = kind === 'redis' ? seededRedis : seededPg;
      const store = kind === 'redis' ? redis.store : pg.store;
      const page = await open(kind === 'redis' ? redisUrl : pgUrl);
      try {
        const stats = await store.stats!();
        expect(stats).toMatchObject({
          inProgress: seeded.counts.inProgress,
          completed: seeded.counts.completed,
          released: seeded.counts.released,
        });
        expect(await text(page, 'count-inProgress')).toBe(String(stats.inProgress));
        expect(await text(page, 'count-completed')).toBe(String(stats.completed));
        expect(await text(page, 'count-released')).toBe(String(stats.released));
        expect(await page.locator('.tile', { hasText: 'in progress' }).textContent()).toContain(
          `${seeded.counts.leaseExpired} with lease run out`,
        );
        expect(await page.getByTestId('in-progress-row').count()).toBe(seeded.counts.inProgress);
        expect(await page.getByTestId('completed-row').count()).toBe(seeded.counts.completed);
        expect(await page.getByTestId('released-row').count()).toBe(seeded.counts.released);
        // The stuck key is listed first (least lease left), its lease shown as run out.
        const first = page.getByTestId('in-progress-row').first();
        expect(await first.locator('td.key').getAttribute('data-key')).toBe(seeded.stuck);
        expect(await first.textContent()).toContain('ran out');
        expect(await text(page, 'parked-count')).toBe(String(seeded.counts.parked));
        expect(await page.getByTestId('parked-row').count()).toBe(seeded.counts.parked);
        // The engine's events, through the event log: the takeover and the fenced complete of the seed.
        await page.locator('[data-testid="event-row"][data-type="takeover"]').first().waitFor();
        expect(await page.locator('[data-testid="event-row"][data-type="fenced"]').count()).toBe(1);
        expect(await page.locator('#rates svg.chart rect').count()).toBeGreaterThan(0);
        expect(await page.content()).not.toContain(seeded.bodyMarker);
      } finally {
        await page.close();
      }
    });
  }

  it('the outbox panels are the outbox table: backlog and lag per topic, dead letters with their last error', async () => {
    const page = await open(pgUrl);
    try {
      const stats = await outboxStats(pool, { schema: pg.schema });
      expect(stats).toMatchObject({ pending: 5, dead: 2 });
      expect(await text(page, 'outbox-pending')).toBe(String(stats.pending));
      expect(await text(page, 'outbox-dead')).toBe(String(stats.dead));
      const topic = (name: string) => page.locator(`[data-testid="topic-row"][data-topic="${name}"]`);
      expect(await topic('orders').getByTestId('topic-pending').textContent()).toBe('3');
      expect(await topic('payments').getByTestId('topic-pending').textContent()).toBe('2');
      expect(await topic('payment.failed').getByTestId('topic-dead').textContent()).toBe('2');
      expect(await topic('orders').getByTestId('topic-oldest').textContent()).toContain(
        `#${outbox.pending.orders![0]}`,
      );
      for (const id of outbox.dead) {
        const row = page.locator(`[data-testid="dead-row"][data-id="${id}"]`);
        expect(await row.getByTestId('dead-error').textContent()).toContain(outbox.error);
      }
      expect(await page.locator('#backlog svg.chart polyline').count()).toBeGreaterThan(0);
      expect(await page.content()).not.toContain('PAYLOAD-SECRET');
      if (process.env.ONCELY_DASHBOARD_SCREENSHOT) {
        await page.screenshot({ path: process.env.ONCELY_DASHBOARD_SCREENSHOT, fullPage: true });
      }
    } finally {
      await page.close();
    }
  });

  it('looks a key up by scope and key, and shows its body only when asked', async () => {
    const page = await open(pgUrl);
    try {
      await page.locator('textarea[name="scope"]').fill(seededPg.completed.scope);
      await page.locator('input[name="key"]').fill(seededPg.completed.key);
      await page.getByRole('button', { name: 'Look up' }).click();
      const result = page.getByTestId('lookup-result');
      await result.getByText(seededPg.completed.hashed).waitFor();
      expect(await result.textContent()).toContain('201');
      expect(await page.content()).not.toContain(seededPg.bodyMarker);
      await page.getByTestId('show-body').click();
      expect(await page.getByTestId('body-text').textContent()).toContain(seededPg.bodyMarker);
    } finally {
      await page.close();
    }
  });

  it('an action from a page without the token is refused, and nothing changes', async () => {
    const page = await open(pgUrl);
    try {
      const id = outbox.dead[0]!;
      await page.locator(`[data-testid="dead-row"][data-id="${id}"] button[data-action="discard"]`).click();
      await page.getByTestId('toast').getByText('token').waitFor();
      const { rows } = await pool.query(`SELECT state FROM "${pg.schema}".oncely_outbox WHERE id = $1`, [id]);
      expect(rows[0]?.state).toBe(2);
      expect(actionLog.at(-1)?.status).toBe(401);
    } finally {
      await page.close();
    }
  });

  it('a POST from another site is refused, even one that carries the token', async () => {
    const id = outbox.dead[0]!;
    // The attacker's page: another origin (localhost is not 127.0.0.1 to a browser) on a server of its own.
    const evil = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>');
    });
    const start = actionLog.length;
    const posts = () => actionLog.slice(start).filter((entry) => entry.method === 'POST');
    const page = await browser.context.newPage();
    try {
      await page.goto(evil.url.replace('127.0.0.1', 'localhost'));
      const target = `${pgUrl}/api/actions/discard`;
      const outcomes = await page.evaluate(
        async ({ target, id, token }) => {
          const body = JSON.stringify({ ids: [id] });
          const tries = [
            // With the token (as if it leaked): the custom header makes the browser ask first (CORS preflight).
            fetch(target, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-oncely-token': token },
              body,
            }),
            // A simple request, sent without asking: reaches the server, which must refuse it.
            fetch(target, {
              method: 'POST',
              mode: 'no-cors',
              headers: { 'content-type': 'text/plain' },
              body,
            }),
          ];
          const settled = await Promise.allSettled(tries);
          // A classic form post, the oldest forgery.
          const form = document.createElement('form');
          form.method = 'POST';
          form.action = target;
          form.enctype = 'text/plain';
          const input = document.createElement('input');
          input.name = body;
          form.appendChild(input);
          document.body.appendChild(form);
          return settled.map((s) => s.status);
        },
        { target, id, token: TOKEN },
      );
      expect(outcomes[0]).toBe('rejected');
      await page.evaluate(() => document.querySelector('form')?.submit());
      await page.waitForURL(/api\/actions\/discard/);
      await until(() => posts().length >= 2);
      const reached = actionLog.slice(start);
      // The fetch with the token never got past its preflight: the dashboard grants no CORS.
      for (const entry of reached.filter((e) => e.method === 'OPTIONS')) expect(entry.status).toBe(405);
      expect(posts(), JSON.stringify(reached)).toHaveLength(2);
      expect(posts().every((entry) => entry.status === 403 && entry.site === 'cross-site')).toBe(true);
      const { rows } = await pool.query(`SELECT state FROM "${pg.schema}".oncely_outbox WHERE id = $1`, [id]);
      expect(rows[0]?.state).toBe(2);
    } finally {
      await page.close();
      await evil.close();
    }
  });

  it('a dead letter replayed from the page is republished and reaches the broker (Redis Streams)', async () => {
    const stream = `${redis.prefix}:stream`;
    const relay = new OutboxRelay({
      pool,
      schema: pg.schema,
      publisher: new RedisStreamsPublisher({ client: redis.client, stream: () => stream }),
      minPollMs: 20,
    });
    await relay.start();
    // The token arrives in the fragment, as the CLI prints it, and moves to the tab's sessionStorage.
    const page = await open(`${pgUrl}/#token=${TOKEN}`);
    try {
      expect(page.url()).not.toContain(TOKEN);
      const id = outbox.dead[1]!;
      const published = async () =>
        (await redis.client.xrange(stream, '-', '+')).some(([, fields]) => fields[1] === id);
      expect(await published()).toBe(false);
      await page.locator(`[data-testid="dead-row"][data-id="${id}"] button[data-action="replay"]`).click();
      await page.getByTestId('toast').getByText('replayed 1 dead letter').waitFor();
      await until(published, 15_000);
      await page.locator(`[data-testid="dead-row"][data-id="${id}"]`).waitFor({ state: 'detached' });
      expect(await text(page, 'outbox-dead')).toBe('1');
    } finally {
      await page.close();
      await relay.stop({ timeoutMs: 2_000 });
    }
  });
});
