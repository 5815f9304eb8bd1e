/**
 * Test (dashboard): on Redis, `scanLimit` bounds the keys a snapshot's SCAN walks, not the records it finds. In a
 * Redis where oncely's records are a few among many foreign keys, one snapshot used to walk the whole keyspace
 * (1M keys, 1,999 SCAN calls) to find 20 records. The keyspace here is a redis-server of the test's own, so the
 * server's command counts are this test's alone.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { dashboard } from '../../src/dashboard/index.js';
import type { Snapshot } from '../../src/dashboard/model.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { useDisposableRedis } from '../redis/support/disposable.js';
import { type Browser, chromiumAvailable, launch } from './support/browser.js';
import { serve } from './support/env.js';

const FOREIGN = 50_000;
const RECORDS = 20;
/** The dashboard's SCAN asks for this many keys per call (keys-redis.ts). */
const SCAN_COUNT = 500;

const redis = useDisposableRedis();

beforeAll(async () => {
  const { client, admin } = redis;
  for (let start = 0; start < FOREIGN; start += 5_000) {
    const pipeline = admin.pipeline();
    for (let i = start; i < start + 5_000; i++) pipeline.set(`session:${i}`, 'someone else');
    await pipeline.exec();
  }
  const store = new RedisStore({ client });
  for (let i = 0; i < RECORDS; i++) {
    await store.begin({ key: `record-${i}`, fingerprint: 'fp', leaseMs: 600_000, retentionMs: 3_600_000 });
  }
  expect(await admin.dbsize()).toBe(FOREIGN + RECORDS);
}, 60_000);

const scanCalls = async () => {
  const info = await redis.admin.info('commandstats');
  return Number(/^cmdstat_scan:calls=(\d+)/m.exec(info)?.[1] ?? 0);
};

async function snapshotWith(scanLimit: number | undefined): Promise<{ snapshot: Snapshot; scans: number }> {
  const board = dashboard({
    source: { redis: redis.client },
    ...(scanLimit === undefined ? {} : { scanLimit }),
  });
  await redis.admin.config('RESETSTAT');
  const snapshot = (await (
    await board.fetch(new Request('http://127.0.0.1/api/snapshot'))
  ).json()) as Snapshot;
  return { snapshot, scans: await scanCalls() };
}

describe('scanLimit', () => {
  for (const scanLimit of [5_000, 1_234, undefined]) {
    const limit = scanLimit ?? 10_000;
    it(`${scanLimit === undefined ? 'default' : scanLimit}: bounds the keys scanned (at most ${Math.ceil(limit / SCAN_COUNT)} SCAN calls) and reports truncated`, async () => {
      const { snapshot, scans } = await snapshotWith(scanLimit);
      expect(scans).toBeGreaterThan(0);
      expect(scans).toBeLessThanOrEqual(Math.ceil(limit / SCAN_COUNT));
      expect(snapshot.keys?.counts).toMatchObject({ truncated: true, scanned: limit });
      expect(snapshot.keys?.counts.records).toBeLessThanOrEqual(RECORDS);
      expect(snapshot.parked?.truncated).toBe(true);
    });
  }

  it('a limit above the keyspace walks all of it, finds every record and is not truncated', async () => {
    const { snapshot, scans } = await snapshotWith(1_000_000);
    expect(snapshot.keys?.counts).toMatchObject({ truncated: false, records: RECORDS, inProgress: RECORDS });
    expect(scans).toBeLessThanOrEqual(Math.ceil(1_000_000 / SCAN_COUNT));
  });

  const canRun = chromiumAvailable();
  it.skipIf(!canRun)(
    'the page says the counts are a lower bound, and after how many keys',
    async () => {
      const board = dashboard({ source: { redis: redis.client }, scanLimit: 2_000 });
      const http = await serve((req, res) => board.node(req, res));
      let browser: Browser | undefined;
      try {
        browser = await launch();
        const page = await browser.context.newPage();
        await page.goto(http.url);
        const notice = page.getByTestId('keys-truncated');
        await notice.waitFor();
        expect(await notice.textContent()).toContain('2,000 keys');
        expect(await page.locator('.tile', { hasText: 'completed' }).textContent()).toContain('(at least)');
      } finally {
        await browser?.close();
        await http.close();
      }
    },
    60_000,
  );
});
