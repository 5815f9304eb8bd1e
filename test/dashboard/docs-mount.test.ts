/**
 * Test (dashboard, docs): the mount examples of docs/dashboard.md ("Mount it in your application") run exactly as
 * written, each in a Node process of its own, and are opened in headless Chromium. An example a browser cannot get
 * through (a custom header it never sends) fails here: the page must load and show the store's numbers with the
 * operator's credentials, and the page and its API must refuse a browser without them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLog } from '../../src/dashboard/index.js';
import { migrate as migrateOutbox } from '../../src/messaging/outbox/index.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { repoRoot } from '../docs/markdown.js';
import { freePort, type RedisProcess, startRedis, stopAll } from '../redis/support/redis-server.js';
import { requireService, services } from '../support/services.js';
import { type Browser, chromiumAvailable, launch } from './support/browser.js';
import { until } from './support/env.js';
import { rawGet } from './support/raw-request.js';
import { type Seeded, seed } from './support/seed.js';

const PASSWORD = `docs-${randomBytes(12).toString('hex')}`;
const canRun = chromiumAvailable();

/** The ```ts blocks of the docs' mount section, in order. */
function mountBlocks(): string[] {
  const text = readFileSync(join(repoRoot, 'docs/dashboard.md'), 'utf8');
  const start = text.indexOf('\n## Mount it in your application');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end);
  return [...section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

interface Running {
  readonly url: string;
  readonly child: ChildProcess;
  readonly output: () => string;
}

describe.skipIf(!canRun)('the mount examples of docs/dashboard.md, in Chromium', () => {
  const database = `oncely_dash_docs_${randomBytes(4).toString('hex')}`;
  const workDir = join(repoRoot, '.tmp', database);
  const admin = new pg.Pool({ connectionString: services.postgres.url, max: 1 });
  const url = new URL(services.postgres.url);
  url.pathname = `/${database}`;
  let pool: pg.Pool | undefined;
  let redisServer: RedisProcess | undefined;
  let redis: Redis | undefined;
  let seededPg: Seeded;
  let seededRedis: Seeded;
  const running: Running[] = [];
  const blocks = mountBlocks();
  let withPassword: Browser | undefined;
  let without: Browser | undefined;

  /** Runs one block as a reader would paste it into a file of their own, and waits for it to listen. */
  async function run(code: string): Promise<Running> {
    const file = join(workDir, `block-${running.length}.ts`);
    writeFileSync(file, code);
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: repoRoot,
      env: {
        ...process.env,
        DATABASE_URL: url.href,
        REDIS_URL: `redis://127.0.0.1:${redisServer!.port}`,
        OPERATOR_PASSWORD: PASSWORD,
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    const started: Running = { url: `http://127.0.0.1:${port}`, child, output: () => output };
    running.push(started);
    const listening = () =>
      new Promise<boolean>((resolve) => {
        if (child.exitCode !== null) throw new Error(`the block exited (${child.exitCode}):\n${output}`);
        const socket = connect({ host: '127.0.0.1', port });
        socket.once('connect', () => resolve(socket.destroy() !== undefined));
        socket.once('error', () => resolve(false));
      });
    await until(listening, 30_000);
    return started;
  }

  beforeAll(async () => {
    await requireService('postgres');
    mkdirSync(workDir, { recursive: true });
    // A database of the test's own: the examples use the default schema and table names, which other tests share.
    await admin.query(`CREATE DATABASE ${database}`);
    pool = new pg.Pool({ connectionString: url.href, max: 2 });
    // DROP DATABASE … WITH (FORCE) at the end may reach a connection the pool is still closing.
    pool.on('error', () => {});
    const store = new PostgresStore({ pool, listen: false });
    await store.migrate();
    await migrateOutbox(pool);
    const pgLog = new EventLog({ source: { postgres: pool } });
    await pgLog.migrate();
    seededPg = await seed(store, pgLog);
    await pgLog.close();
    // A Redis of the test's own: the Hono example reads the default prefix, `oncely`.
    redisServer = await startRedis();
    redis = new Redis({ port: redisServer.port, host: '127.0.0.1' });
    const redisLog = new EventLog({ source: { redis } });
    seededRedis = await seed(new RedisStore({ client: redis }), redisLog);
    await redisLog.close();
    withPassword = await launch({ httpCredentials: { username: 'operator', password: PASSWORD } });
    without = await launch();
  }, 120_000);

  afterAll(async () => {
    for (const { child } of running) {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    }
    await withPassword?.close();
    await without?.close();
    redis?.disconnect();
    await stopAll([redisServer]);
    await pool?.end();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    rmSync(workDir, { recursive: true, force: true });
  });

  /** Opens the page and waits until it shows a snapshot; the completed-keys tile as the page shows it. */
  async function completedOnPage(browser: Browser, page: string): Promise<string> {
    const tab = await browser.context.newPage();
    try {
      const response = await tab.goto(page);
      expect(response?.status()).toBe(200);
      await tab.getByTestId('status').filter({ hasText: 'live' }).waitFor();
      return (await tab.getByTestId('count-completed').textContent()) ?? '';
    } finally {
      await tab.close();
    }
  }

  /**
   * What a browser without the credentials gets: the server's 401 and none of the page. Chromium then stands for a
   * user who cancels the password prompt, so the navigation itself ends in ERR_INVALID_AUTH_CREDENTIALS.
   */
  async function refusedInBrowser(page: string): Promise<void> {
    const tab = await without!.context.newPage();
    const statuses: number[] = [];
    tab.on('response', (response) => statuses.push(response.status()));
    try {
      const navigation = await tab.goto(page).catch((error: Error) => error);
      if (navigation instanceof Error) expect(navigation.message).toContain('ERR_INVALID_AUTH_CREDENTIALS');
      else expect(navigation?.status()).toBe(401);
      expect(statuses).toEqual([401]);
      expect(await tab.getByTestId('status').count()).toBe(0);
    } finally {
      await tab.close();
    }
  }

  it('the section has the three examples: Basic auth, an address allow-list, Hono', () => {
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toContain('www-authenticate');
    expect(blocks[1]).toContain('remoteAddress');
    expect(blocks[2]).toContain("from 'hono/basic-auth'");
  });

  it('Express with Basic auth: the page loads and shows the store with the password, and is refused without', async () => {
    const { url: base, output } = await run(blocks[0]!);
    const page = `${base}/ops/oncely/`;
    expect(await completedOnPage(withPassword!, page), output()).toBe(String(seededPg.counts.completed));
    await refusedInBrowser(page);
    const api = await rawGet(base, '/ops/oncely/api/snapshot');
    expect(api.status).toBe(401);
    expect(api.body).not.toContain('counts');
    const wrong = await rawGet(base, '/ops/oncely/api/snapshot', {
      authorization: `Basic ${Buffer.from(`operator:${PASSWORD}x`).toString('base64')}`,
    });
    expect(wrong.status).toBe(401);
  }, 90_000);

  it('Express with an address allow-list: the page loads from loopback, and another address is refused', async () => {
    const { url: base, output } = await run(blocks[1]!);
    // No credentials: the address is what lets this browser in.
    expect(await completedOnPage(without!, `${base}/ops/oncely/`), output()).toBe(
      String(seededPg.counts.completed),
    );
    // 127.0.0.2 is this machine too, but not on the list.
    const other = await new Promise<number>((resolve, reject) => {
      const socket = connect({
        host: '127.0.0.1',
        port: Number(new URL(base).port),
        localAddress: '127.0.0.2',
      });
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      socket.once('end', () => resolve(Number(answer.split(' ')[1])));
      socket.once('error', reject);
      socket.write('GET /ops/oncely/api/snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    });
    expect(other).toBe(403);
  }, 90_000);

  it('Hono with its Basic auth (Redis records): the page loads with the password, and is refused without', async () => {
    const { url: base, output } = await run(blocks[2]!);
    const page = `${base}/ops/oncely/`;
    expect(await completedOnPage(withPassword!, page), output()).toBe(String(seededRedis.counts.completed));
    await refusedInBrowser(page);
    expect((await rawGet(base, '/ops/oncely/api/snapshot')).status).toBe(401);
  }, 90_000);
});
