/**
 * Test (Redis store): `statsScanLimit` bounds the keys `stats()` walks (oncely's or not), not the records it finds,
 * as the inspector's `scanLimit` does. In a Redis where oncely's records are a few among many foreign keys, a bound
 * on records found walked the whole keyspace to find them (the CLI's `oncely stats` and `store.stats()` did). The
 * keyspace is a redis-server of the test's own, so the server's command counts are this test's alone.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../src/stores/redis/index.js';
import { useDisposableRedis } from './support/disposable.js';

const FOREIGN = 20_000;
const RECORDS = 20;
/** Keys one SCAN asks for at most (bounded-scan.ts). */
const SCAN_COUNT = 500;

const redis = useDisposableRedis();

beforeAll(async () => {
  const { client, admin } = redis;
  const pipeline = admin.pipeline();
  for (let i = 0; i < FOREIGN; i++) pipeline.set(`session:${i}`, 'someone else');
  await pipeline.exec();
  const store = new RedisStore({ client });
  for (let i = 0; i < RECORDS; i++) {
    await store.begin({ key: `record-${i}`, fingerprint: 'fp', leaseMs: 600_000, retentionMs: 3_600_000 });
  }
}, 60_000);

async function statsWith(statsScanLimit: number) {
  const { client, admin } = redis;
  const store = new RedisStore({ client, statsScanLimit });
  await admin.config('RESETSTAT');
  const stats = await store.stats();
  const info = await admin.info('commandstats');
  return { stats, scans: Number(/^cmdstat_scan:calls=(\d+)/m.exec(info)?.[1] ?? 0) };
}

describe('RedisStore.stats() and statsScanLimit', () => {
  for (const limit of [2_000, 1_234]) {
    it(`${limit}: walks at most ${limit} keys (${Math.ceil(limit / SCAN_COUNT)} SCAN calls) among ${FOREIGN} foreign ones, and says truncated`, async () => {
      const { stats, scans } = await statsWith(limit);
      expect(scans).toBeGreaterThan(0);
      expect(scans).toBeLessThanOrEqual(Math.ceil(limit / SCAN_COUNT));
      expect(stats.truncated).toBe(true);
      expect(stats.records).toBeLessThanOrEqual(RECORDS);
    });
  }

  it('a limit above the keyspace walks all of it, counts every record and is not truncated', async () => {
    const { stats } = await statsWith(1_000_000);
    expect(stats).toMatchObject({ truncated: false, records: RECORDS, inProgress: RECORDS });
  });
});
