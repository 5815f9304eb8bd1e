import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate as migrateOutbox } from '../../src/messaging/outbox/index.js';
import { migrate as migrateStore } from '../../src/stores/postgres/index.js';
import { type RedisProcess, startRedis, stopAll } from '../redis/support/redis-server.js';
import { requireService, type ServiceName, services } from '../support/services.js';
import { parseDocumentation, repoRoot, type Snippet } from './markdown.js';
import { DisposableNats } from './nats-server.js';
import { isNestApp, nestTsconfigPath } from './typecheck.js';

/**
 * The documentation blocks marked `<!-- snippet: run -->` run against the local services, each in a Node process
 * of its own (run-snippet.ts) with nothing defined for it: its stubs of the reader's code are in the block, and it
 * finds the services where a reader's app would, in DATABASE_URL, REDIS_URL, NATS_URL and AMQP_URL. A block passes
 * when it ran to its end and every HTTP server it started answered a retried POST /payments with a replay.
 */
const snippets = [...parseDocumentation().values()].flatMap((file) => file.snippets);
const label = (snippet: Snippet) => `${snippet.file}:${snippet.line}`;

describe('documentation blocks marked run', () => {
  const runnable = snippets.filter((snippet) => snippet.mode === 'run');
  const database = `oncely_docs_${randomBytes(4).toString('hex')}`;
  const workDir = join(repoRoot, '.tmp', database);
  const admin = new pg.Pool({ connectionString: services.postgres.url, max: 1 });
  let results = new Map<Snippet, Promise<RunResult>>();
  let nats: DisposableNats | undefined;
  let redis: RedisProcess | undefined;

  beforeAll(async () => {
    for (const name of ['postgres', 'rabbitmq'] satisfies ServiceName[]) await requireService(name);
    // Redis and NATS of the run's own: the blocks create streams, groups and consumers with fixed names, which
    // would outlive the run on the shared servers, and could hide a block that stopped creating them.
    nats = await DisposableNats.start();
    redis = await startRedis();
    // A database of its own: the blocks use the default schema and table names, which other tests share in `test`.
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(services.postgres.url);
    url.pathname = `/${database}`;
    const pool = new pg.Pool({ connectionString: url.href, max: 1 });
    try {
      // What the reader already has: their business tables, and oncely's tables migrated in their deploy step.
      await pool.query(`
        CREATE TABLE payments (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, order_id text NOT NULL,
                               amount integer NOT NULL);
        CREATE TABLE orders (id text PRIMARY KEY, amount integer NOT NULL);
        CREATE TABLE accounts (id text PRIMARY KEY, cents bigint NOT NULL DEFAULT 0);`);
      await migrateStore(pool);
      await migrateOutbox(pool);
    } finally {
      await pool.end();
    }
    mkdirSync(workDir, { recursive: true });
    // tsx applies a tsconfig's compiler options to the files it includes: the Nest blocks' own, over this directory.
    const nestConfig = join(workDir, 'nest.tsconfig.json');
    writeFileSync(nestConfig, JSON.stringify({ extends: nestTsconfigPath, include: ['.'] }));
    const env = {
      ...process.env,
      DATABASE_URL: url.href,
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      NATS_URL: nats.url,
      AMQP_URL: services.rabbitmq.url,
    };
    // Two at a time: the machine has two cores, and each run is a Node process compiling TypeScript.
    results = runAll(runnable, 2, (snippet, index) => {
      const file = join(workDir, `${snippet.file.replaceAll('/', '_')}_L${snippet.line}_${index}.ts`);
      writeFileSync(file, snippet.code);
      // A Nest app's block runs with legacy decorators, as it was type-checked (typecheck.ts). Under a tsconfig of
      // its own tsx's cache is not shared with the other blocks: the first compiles the sources anew (over 45 s on a
      // loaded machine, 20 s warm), hence its longer limit.
      if (isNestApp(snippet))
        return runFile(file, { ...env, TSX_TSCONFIG_PATH: nestConfig }, 2 * RUN_TIMEOUT_MS);
      return runFile(file, env);
    });
  });

  afterAll(async () => {
    await Promise.allSettled(results.values());
    rmSync(workDir, { recursive: true, force: true });
    await nats?.stop();
    await stopAll([redis]);
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  for (const snippet of runnable) {
    it(`${label(snippet)} runs to its end`, async () => {
      const result = await results.get(snippet);
      if (result === undefined) throw new Error('the block was never started (did beforeAll fail?)');
      if (result.code !== 0)
        throw new Error(`${label(snippet)} exited ${result.code}:\n${result.stderr}${result.stdout}`);
      expect(result.stdout).toContain('ran to the end');
    });
  }
});

interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const RUN_TIMEOUT_MS = 45_000;

/** One block in a Node process of its own (tsx compiles it; tsconfig paths map oncely/* to the sources). */
function runFile(file: string, env: NodeJS.ProcessEnv, timeoutMs = RUN_TIMEOUT_MS): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'test/docs/run-snippet.ts'), file],
      {
        cwd: repoRoot,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts every job, at most `limit` at a time in the order given, and hands back each one's promise at once. */
function runAll<T, R>(items: readonly T[], limit: number, job: (item: T, index: number) => Promise<R>) {
  let active = 0;
  const waiting: (() => void)[] = [];
  const acquire = async () => {
    if (active < limit) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = () => {
    const next = waiting.shift();
    if (next === undefined) active--;
    else next();
  };
  return new Map(
    items.map((item, index) => [
      item,
      acquire()
        .then(() => job(item, index))
        .finally(release),
    ]),
  );
}
