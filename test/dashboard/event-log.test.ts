import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../../src/dashboard/events/read.js';
import { EventLog } from '../../src/dashboard/index.js';
import { resolveSource } from '../../src/dashboard/source.js';
import type { OncelyEvent } from '../../src/index.js';
import { requireService } from '../support/services.js';
import { postgresEnv, redisEnv, testPool } from './support/env.js';

// The event log on both stores: counts per type and bucket, the notable events one by one, bounded, and a flush
// that fails keeps what it could not write.
const pool = testPool();
let pg: Awaited<ReturnType<typeof postgresEnv>>;
let redis: Awaited<ReturnType<typeof redisEnv>>;

beforeAll(async () => {
  await requireService('postgres');
  await requireService('redis');
  pg = await postgresEnv(pool);
  redis = await redisEnv();
});

afterAll(async () => {
  await pg?.drop();
  await redis?.drop();
  await pool.end();
});

const key = 'k'.repeat(43);
const events: OncelyEvent[] = [
  { type: 'acquired', key, token: 1, attempt: 1 },
  { type: 'completed', key, token: 1 },
  { type: 'replayed', key },
  { type: 'replayed', key },
  { type: 'takeover', key, token: 2, attempt: 2 },
  { type: 'storeError', operation: 'begin', error: new Error('connection refused') },
];

for (const kind of ['redis', 'postgres'] as const) {
  describe(`${kind} event log`, () => {
    const source = () =>
      kind === 'redis'
        ? { redis: redis.client, prefix: `${redis.prefix}-log` }
        : { postgres: pool, schema: pg.schema };

    it('counts every event per type and keeps the notable ones, newest first, at most `keep`', async () => {
      const log = new EventLog({ source: source(), keep: 3 });
      await log.migrate();
      for (const event of events) log.onEvent(event);
      await log.flush();
      for (let i = 0; i < 4; i++) log.onEvent({ type: 'leaseLost', key, token: 10 + i });
      await log.close();
      const read = await readEvents(resolveSource('test', source()), 10, 60_000);
      expect(read.available).toBe(true);
      const totals: Record<string, number> = {};
      for (const bucket of read.rates)
        for (const [type, n] of Object.entries(bucket.counts)) totals[type] = (totals[type] ?? 0) + n;
      expect(totals).toEqual({
        acquired: 1,
        completed: 1,
        replayed: 2,
        takeover: 1,
        storeError: 1,
        leaseLost: 4,
      });
      // PostgreSQL trims before the flush's own rows land: at most keep + one flush's worth.
      expect(read.recent.length).toBeLessThanOrEqual(kind === 'redis' ? 3 : 3 + 4);
      expect(read.recent[0]).toMatchObject({ type: 'leaseLost', key, detail: expect.stringContaining('13') });
    });

    it('keeps the counts and events of a failed flush for the next one', async () => {
      const resolved = source();
      const log = new EventLog({ source: resolved });
      log.onEvent({ type: 'fenced', key, token: 5, operation: 'complete' });
      // A store that fails: the PostgreSQL tables renamed away, a Redis client disconnected.
      const broken =
        kind === 'redis'
          ? () => redis.client.disconnect()
          : () => pool.query(`ALTER TABLE "${pg.schema}".oncely_events RENAME TO gone`);
      const mend =
        kind === 'redis'
          ? () => redis.client.connect()
          : () => pool.query(`ALTER TABLE "${pg.schema}".gone RENAME TO oncely_events`);
      await broken();
      await expect(log.flush()).rejects.toThrow();
      await mend();
      await log.close();
      const read = await readEvents(resolveSource('test', resolved), 50, 60_000);
      expect(read.recent.some((event) => event.type === 'fenced' && event.detail.includes('token 5'))).toBe(
        true,
      );
    });
  });
}

it('a dashboard without a log says so instead of showing empty charts as if nothing happened', async () => {
  const read = await readEvents(
    resolveSource('test', { redis: redis.client, prefix: `${redis.prefix}-none` }),
    10,
    60_000,
  );
  expect(read.available).toBe(false);
  const bare = `oncely_dash_nolog_${process.pid}`;
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${bare}"`);
  try {
    const readPg = await readEvents(resolveSource('test', { postgres: pool, schema: bare }), 10, 60_000);
    expect(readPg.available).toBe(false);
  } finally {
    await pool.query(`DROP SCHEMA "${bare}" CASCADE`);
  }
});
