import { describe, expect, it } from 'vitest';
import { fuzzMarkdown, runFuzz } from '../../proof/fuzz.js';
import { requireService, services } from '../support/services.js';

// The short version of the proof's fuzz phase (proof/fuzz.ts; `npm run proof` sends 100,000): generated requests
// as raw bytes to the four adapters on a RedisStore, then every record checked. The seed is printed on failure.
describe('the proof, short: fuzzed requests on every adapter', () => {
  it('answer without a 5xx, a crash or a mis-framed response, and leave every record readable and replayable', async () => {
    await requireService('redis');
    const seed = Date.now() % 2 ** 31;
    const report = await runFuzz({
      requests: 800,
      seed,
      connections: 4,
      redisUrl: services.redis.url,
      retryShare: 0.2,
      log: () => {},
    });
    expect(report.requests).toBeGreaterThanOrEqual(800);
    expect(report.records).toBeGreaterThan(0);
    expect(report.findings, `seed ${seed}\n${fuzzMarkdown(report)}`).toEqual([]);
  }, 240_000);
});
