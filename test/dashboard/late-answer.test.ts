/**
 * Test (dashboard): a request-timeout middleware answered while the snapshot was held up (the keys table locked
 * by another connection); when the snapshot arrives, the dashboard must drop its late answer. Writing it threw
 * ERR_HTTP_HEADERS_SENT inside a promise callback: an unhandled rejection, which ends a Node process.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireService, services } from '../support/services.js';
import { postgresEnv, serve, testPool, until } from './support/env.js';
import { lateAnswerApp, lockKeys, waitingReads } from './support/late-app.js';
import { rawGet } from './support/raw-request.js';

const pool = testPool();
let pg: Awaited<ReturnType<typeof postgresEnv>>;

beforeAll(async () => {
  await requireService('postgres');
  pg = await postgresEnv(pool);
});

afterAll(async () => {
  await pg?.drop();
  await pool.end();
});

/**
 * The scenario against a served application at `url`: the first snapshot request is answered 503 by the timeout
 * while its build waits on the lock; then the lock goes, and a second snapshot request (sharing that build, so
 * answered only after the first request's late answer was attempted) and a health check follow.
 */
async function lateAnswer(url: string) {
  const lock = await lockKeys(pool, pg.schema);
  try {
    const first = await rawGet(url, '/ops/oncely/api/snapshot');
    expect(first).toMatchObject({ status: 503, body: 'timed out' });
    // The build really is held up by the lock (not finished, not failed).
    await until(async () => (await waitingReads(pool, pg.schema)) > 0);
  } finally {
    await lock.release();
  }
  const second = await rawGet(url, '/ops/oncely/api/snapshot').catch((error: Error) => error);
  const health = await rawGet(url, '/health').catch((error: Error) => error);
  return { second, health };
}

describe('a late answer', () => {
  it('is dropped: the application process lives on (its own process, default rejection handling)', async () => {
    const path = fileURLToPath(new URL('./workers/late-answer.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', path], {
      env: {
        ...process.env,
        ONCELY_WORKER: JSON.stringify({ url: services.postgres.url, schema: pg.schema }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          const event = JSON.parse(line) as { type: string; port: number };
          if (event.type === 'listening') resolve(event.port);
        });
        void exited.then((code) =>
          reject(new Error(`the worker exited (${code}) before serving:\n${stderr}`)),
        );
      });
      const { health } = await lateAnswer(`http://127.0.0.1:${port}`);
      expect(health, stderr).toMatchObject({ status: 200, body: 'ok' });
      expect(child.exitCode, stderr).toBeNull();
      expect(stderr).not.toContain('ERR_HTTP_HEADERS_SENT');
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    }
  }, 60_000);

  it('raises no unhandled rejection (in this process)', async () => {
    const rejections: unknown[] = [];
    const collect = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', collect);
    const server = await serve(lateAnswerApp(pool, pg.schema));
    try {
      const { second, health } = await lateAnswer(server.url);
      expect(second).toMatchObject({ status: expect.any(Number) });
      expect(health).toMatchObject({ status: 200 });
      // Rejections are reported once the microtasks of the tick that made them ran: a macrotask later.
      await new Promise((resolve) => setImmediate(resolve));
      expect(rejections.map(String)).toEqual([]);
    } finally {
      process.off('unhandledRejection', collect);
      await server.close();
    }
  }, 60_000);
});
