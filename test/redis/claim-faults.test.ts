import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, isStoreUnavailableError, type OncelyEvent } from '../../src/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { useDisposableRedis } from './support/disposable.js';
import { startRedis, stopAll, storeClient } from './support/redis-server.js';

// Claims under network and server faults, against a real redis-server of this file's own.
const redis = useDisposableRedis();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a claim whose network goes silent', () => {
  let proxy: TcpProxy;
  let proxied: Redis;
  beforeAll(async () => {
    proxy = await startTcpProxy(redis.server.port);
    proxied = new Redis({
      port: proxy.port,
      host: '127.0.0.1',
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    await new Promise((resolve) => proxied.once('ready', resolve));
  });
  afterAll(async () => {
    proxied.disconnect();
    await proxy.close();
  });

  it('aborts its signal by its deadline, before anyone can take the key over', async () => {
    const prefix = `silent-${randomUUID().slice(0, 8)}`;
    const leaseMs = 900;
    // A store timeout longer than a third of the lease: renewals hang well past the deadline.
    const owner = new Engine({
      store: new RedisStore({ client: proxied, prefix }),
      leaseMs,
      storeTimeoutMs: 800,
    });
    const begun = await owner.begin({ key: 'k', fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(`expected acquired, got ${begun.kind}`);
    const { claim } = begun;
    const abortedAt = new Promise<number>((resolve) =>
      claim.signal.addEventListener('abort', () => resolve(Date.now())),
    );
    proxy.blackhole();
    try {
      const other = new Engine({ store: new RedisStore({ client: redis.client, prefix }), leaseMs });
      let takenAt: number | undefined;
      for (let tries = 0; takenAt === undefined && tries < 400; tries++) {
        const attempt = await other.begin({ key: 'k', fingerprint: 'f' });
        if (attempt.kind === 'acquired') {
          takenAt = Date.now();
          await attempt.claim.release();
        } else await sleep(5);
      }
      expect(takenAt).toBeDefined();
      const aborted = await abortedAt;
      // The owner hears of it by its deadline (give or take a timer's lateness on a loaded machine), and nobody
      // took the key over before that deadline.
      expect(aborted).toBeLessThanOrEqual(claim.deadline + 30);
      expect(takenAt!).toBeGreaterThanOrEqual(claim.deadline);
    } finally {
      proxy.heal();
    }
  });
});

describe('a begin that answers after its caller gave up', () => {
  it('is released at once, so a retry runs instead of meeting 409 for a whole lease', async () => {
    const prefix = `late-${randomUUID().slice(0, 8)}`;
    const events: OncelyEvent[] = [];
    const engine = new Engine({
      store: new RedisStore({ client: redis.client, prefix }),
      leaseMs: 30_000,
      storeTimeoutMs: 200,
      onEvent: (event) => events.push(event),
    });
    redis.server.pause();
    let failed: unknown;
    try {
      await engine.begin({ key: 'k', fingerprint: 'f' });
    } catch (error) {
      failed = error;
    } finally {
      redis.server.resume();
    }
    expect(isStoreUnavailableError(failed)).toBe(true);
    // The paused server now runs the begin it had received and answers "acquired" to nobody.
    let retry = await engine.begin({ key: 'k', fingerprint: 'f' });
    for (let tries = 0; retry.kind === 'inProgress' && tries < 100; tries++) {
      await sleep(10);
      retry = await engine.begin({ key: 'k', fingerprint: 'f' });
    }
    expect(retry.kind).toBe('acquired');
    expect(events).toContainEqual(expect.objectContaining({ type: 'released', reason: 'late' }));
    if (retry.kind === 'acquired') await retry.claim.release();
  });
});

describe('a store that comes back', () => {
  it('gets traffic again within a second of answering, with the circuit open before', async () => {
    const server = await startRedis();
    const client = await storeClient(server.port, { reconnectMs: 50 });
    const engine = new Engine({
      store: new RedisStore({ client, prefix: `back-${randomUUID().slice(0, 8)}` }),
      storeTimeoutMs: 200,
    });
    try {
      await server.kill();
      let opened = false;
      for (let i = 0; i < 50 && !opened; i++) {
        await engine.begin({ key: `down-${i}`, fingerprint: 'f' }).catch((error: unknown) => {
          opened = String((error as Error).message).includes('circuit open');
        });
      }
      expect(opened).toBe(true);
      await server.restart();
      const answeringAt = Date.now();
      let recoveredAt: number | undefined;
      for (let i = 0; recoveredAt === undefined && i < 500; i++) {
        const ok = await engine.begin({ key: `up-${i}`, fingerprint: 'f' }).then(
          (begun) => begun.kind === 'acquired',
          () => false,
        );
        if (ok) recoveredAt = Date.now();
        else await sleep(10);
      }
      expect(recoveredAt).toBeDefined();
      // A fixed 5 s cooldown would keep shedding here; half-open probes let traffic through within a second.
      expect(recoveredAt! - answeringAt).toBeLessThan(1_000);
    } finally {
      client.disconnect();
      await stopAll([server]);
    }
  });
});
