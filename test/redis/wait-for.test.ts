import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { Engine } from '../../src/core/engine.js';
import type { StoredOutcome } from '../../src/core/store.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { useDisposableRedis } from './support/disposable.js';
import { freePort } from './support/redis-server.js';

// waitFor over pub/sub: one shared subscriber per store, a channel per awaited key, polling only as a fallback.
const redis = useDisposableRedis();

const lease = { leaseMs: 10_000, retentionMs: 60_000 };
const NEVER_POLL = 600_000;
const done: StoredOutcome = {
  status: 200,
  headers: [],
  body: Buffer.from('done'),
  encoding: 'identity',
  storage: 'inline',
};
const store = (options: Partial<RedisStoreOptions> = {}) =>
  new RedisStore({ client: redis.client, prefix: `w${randomUUID().slice(0, 8)}`, ...options });

async function pubsubClients(): Promise<number> {
  const list = await redis.admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub');
  return String(list)
    .split('\n')
    .filter((line) => line.trim() !== '').length;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.fail(`never: ${what}`);
}

describe('RedisStore waitFor', () => {
  it('is woken by the completion notice alone (polling disabled), for many waiters on one connection', async () => {
    const s = store({ pollIntervalMs: NEVER_POLL });
    const keys = Array.from({ length: 20 }, () => randomUUID());
    const tokens = new Map<string, number>();
    for (const key of keys) {
      const r = await s.begin({ key, fingerprint: 'f', ...lease });
      assert.ok(r.kind === 'acquired');
      tokens.set(key, r.token);
    }
    const waits = keys.map((key) => s.waitFor(key, { timeoutMs: 30_000 }));
    await eventually(
      async () => (await redis.admin.pubsub('NUMSUB', s.keys.channel(keys[19]!)))[1] === 1,
      'subscribed',
    );
    assert.equal(await pubsubClients(), 1, 'one subscriber connection for all waiters');
    // Settle every key a different way: complete, release, delete.
    for (const [i, key] of keys.entries()) {
      const token = tokens.get(key)!;
      if (i % 3 === 0) await s.complete({ key, token, outcome: done, retentionMs: 60_000 });
      else if (i % 3 === 1) await s.release({ key, token });
      else await s.delete(key);
    }
    assert.deepEqual(
      await Promise.all(waits),
      keys.map(() => true),
    );
    await eventually(
      async () => (await redis.admin.pubsub('CHANNELS', `${s.keys.prefix}:*`)).length === 0,
      'unsubscribed',
    );
    await s.close();
    await eventually(async () => (await pubsubClients()) === 0, 'close() closed the subscriber connection');
  });

  it('times out with false, and an abort signal ends the wait with false', async () => {
    const s = store({ pollIntervalMs: NEVER_POLL });
    const key = randomUUID();
    await s.begin({ key, fingerprint: 'f', ...lease });
    assert.equal(await s.waitFor(key, { timeoutMs: 30 }), false);
    const controller = new AbortController();
    const waiting = s.waitFor(key, { timeoutMs: 30_000, signal: controller.signal });
    controller.abort();
    assert.equal(await waiting, false);
    await s.close();
  });

  it('falls back to polling when the subscriber connection is down', async () => {
    const deadPort = await freePort();
    const subscriber = new Redis({ port: deadPort, host: '127.0.0.1', retryStrategy: () => 1_000 });
    subscriber.on('error', () => {});
    try {
      const s = store({ subscriber, pollIntervalMs: 20 });
      const key = randomUUID();
      const first = await s.begin({ key, fingerprint: 'f', ...lease });
      assert.ok(first.kind === 'acquired');
      const waiting = s.waitFor(key, { timeoutMs: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await s.complete({ key, token: first.token, outcome: done, retentionMs: 60_000 });
      assert.equal(await waiting, true);
      await s.close();
      assert.notEqual(subscriber.status, 'end', "the caller's subscriber is left open");
    } finally {
      subscriber.disconnect();
    }
  });

  it('a waiter registered before a takeover is woken by the new owner (the mark survives the takeover)', async () => {
    let now = Date.now();
    const s = store({ pollIntervalMs: NEVER_POLL, clock: () => now });
    const key = randomUUID();
    const first = await s.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(first.kind === 'acquired');
    const waiting = s.waitFor(key, { timeoutMs: 30_000 });
    // The mark: the top bit of layout 4's state byte ('p' + 0x80).
    await eventually(async () => (await redis.admin.getBuffer(s.keys.record(key)))?.[1] === 0xf0, 'marked');
    now += lease.leaseMs;
    const second = await s.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(second.kind === 'acquired' && second.takeover);
    await s.complete({ key, token: second.token, outcome: done, retentionMs: 60_000 });
    assert.equal(await waiting, true);
    await s.close();
  });

  it('a completion between the failed begin and the subscription is not missed', async () => {
    const s = store({ pollIntervalMs: NEVER_POLL });
    const key = randomUUID();
    const first = await s.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(first.kind === 'acquired');
    // Completed before anyone subscribed: only the re-check after subscribing can see it.
    await s.complete({ key, token: first.token, outcome: done, retentionMs: 60_000 });
    assert.equal(await s.waitFor(key, { timeoutMs: 30_000 }), true);
    await s.close();
  });

  it("lets the engine's waitMs replay a concurrent duplicate as soon as the first completes", async () => {
    const s = store({ pollIntervalMs: NEVER_POLL });
    const engine = new Engine({ store: s, leaseMs: 30_000 });
    let runs = 0;
    const request = {
      key: randomUUID(),
      fingerprint: 'f',
      waitMs: 20_000,
      run: async () => {
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 200));
        return 'paid';
      },
      settle: (result: string) => ({
        keep: true as const,
        outcome: { status: 201, headers: [], body: Buffer.from(result) },
      }),
    };
    const [first, second] = await Promise.all([engine.execute(request), engine.execute(request)]);
    assert.equal(runs, 1);
    assert.deepEqual([first.kind, second.kind].sort(), ['executed', 'replayed']);
    await s.close();
  });
});
