/**
 * Test (dashboard): one snapshot build in flight per dashboard, whatever the source; viewers who ask while it runs
 * share it. A slow build (a locked PostgreSQL table, a stopped Redis) used to be joined by a new full build every
 * `refreshMs / 2`: three viewers polling ran 11 full scans at once.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Dashboard, dashboard } from '../../src/dashboard/index.js';
import { useDisposableRedis } from '../redis/support/disposable.js';
import { requireService } from '../support/services.js';
import { postgresEnv, testPool, until } from './support/env.js';
import { lockKeys, waitingReads } from './support/late-app.js';

const VIEWERS = 3;
const POLLS = 4;
/** The shortest refresh the dashboard takes: a build used to count as fresh for only half of it. */
const REFRESH_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Three viewers polling the snapshot every `REFRESH_MS`, `POLLS` times each, all while the build is held up:
 * the old cache had expired several times over by the last round. Resolves with every answer's promise.
 */
async function pollWhileHeld(board: Dashboard): Promise<Promise<Response>[]> {
  const answers: Promise<Response>[] = [];
  for (let round = 0; round < POLLS; round++) {
    for (let viewer = 0; viewer < VIEWERS; viewer++)
      answers.push(board.fetch(new Request('http://127.0.0.1/api/snapshot')));
    // Time passing is the point here, so a sleep: on a slower machine it only passes more.
    await sleep(REFRESH_MS);
  }
  return answers;
}

async function snapshotTimes(answers: Promise<Response>[]): Promise<Set<number>> {
  const bodies = await Promise.all(answers.map(async (answer) => (await answer).json()));
  return new Set(bodies.map((body: { at: number }) => body.at));
}

/** The test's own view of a pool: counts every statement the dashboard sends on the keys table of `schema`. */
function countKeysReads(pool: pg.Pool, schema: string) {
  let reads = 0;
  const counted = new Proxy(pool, {
    get(target, property, receiver) {
      if (property === 'query') {
        return (...args: Parameters<pg.Pool['query']>) => {
          const [config] = args;
          const text = typeof config === 'string' ? config : (config as { text: string }).text;
          if (text.includes(`"${schema}"."oncely_keys"`)) reads++;
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { counted, reads: () => reads };
}

describe('postgres', () => {
  const pool = testPool();
  // The dashboard's own pool: its reads wait on the lock, while the test still watches through `pool`.
  const boardPool = testPool();
  let env: Awaited<ReturnType<typeof postgresEnv>>;
  beforeAll(async () => {
    await requireService('postgres');
    env = await postgresEnv(pool);
  });
  afterAll(async () => {
    await env?.drop();
    await pool.end();
    await boardPool.end();
  });

  it('viewers share the build in flight: one read of the keys table however many poll while it is slow', async () => {
    const { counted, reads } = countKeysReads(boardPool, env.schema);
    const board = dashboard({
      source: { postgres: counted, schema: env.schema },
      outbox: false,
      refreshMs: REFRESH_MS,
    });
    const lock = await lockKeys(pool, env.schema);
    let answers: Promise<Response>[];
    try {
      answers = await pollWhileHeld(board);
      // One build: its two statements (counts and lists), and in the server those two wait on the lock.
      expect(reads()).toBe(2);
      await until(async () => (await waitingReads(pool, env.schema)) === 2);
    } finally {
      await lock.release();
    }
    // Every viewer got that one build's snapshot.
    expect((await snapshotTimes(answers)).size).toBe(1);
    // A finished build is not kept for ever: once it is older than refreshMs / 2, the next viewer reads again.
    await sleep(REFRESH_MS);
    await (await board.fetch(new Request('http://127.0.0.1/api/snapshot'))).json();
    expect(reads()).toBe(4);
  });

  it('a finished build is reused for refreshMs / 2: viewers after it read nothing', async () => {
    const { counted, reads } = countKeysReads(boardPool, env.schema);
    const board = dashboard({
      source: { postgres: counted, schema: env.schema },
      outbox: false,
      refreshMs: 600_000,
    });
    const first = await (await board.fetch(new Request('http://127.0.0.1/api/snapshot'))).json();
    expect(reads()).toBe(2);
    for (let viewer = 0; viewer < VIEWERS; viewer++) {
      const again = await (await board.fetch(new Request('http://127.0.0.1/api/snapshot'))).json();
      expect(again.at).toBe(first.at);
    }
    expect(reads()).toBe(2);
  });
});

describe('redis', () => {
  // A server of this test's own: it is stopped (SIGSTOP) to hold a build up, which no other test may feel.
  const redis = useDisposableRedis();

  const calls = async (command: string) => {
    const info = await redis.admin.info('commandstats');
    return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  };

  it('viewers share the build in flight: one scan however many poll while the server is stopped', async () => {
    const { client, admin, server } = redis;
    await client.set('oncely:{abc}', 'not a record');
    const board = dashboard({ source: { redis: client }, refreshMs: REFRESH_MS });
    await admin.config('RESETSTAT');
    server.pause();
    let answers: Promise<Response>[];
    try {
      answers = await pollWhileHeld(board);
    } finally {
      server.resume();
    }
    expect((await snapshotTimes(answers)).size).toBe(1);
    // Each build reads the server's clock once before its SCAN.
    expect(await calls('time')).toBe(1);
    expect(await calls('scan')).toBe(1);
  });
});
