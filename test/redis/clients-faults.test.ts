/**
 * RedisStore faults on every client: the server killed (calls fail with StoreUnavailableError, promptly), started
 * again empty (the store recovers on the same client, its scripts loaded again), and `SCRIPT FLUSH` under a live
 * client (NOSCRIPT answered, counted in the server's errorstats, and recovered within the same call), also on the
 * `durable` path where the script and WAIT go together.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreUnavailableError } from '../../src/core/errors.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { CLIENTS, type ClientName, connectClient, type MadeClient } from './support/clients.js';
import { useDisposableRedis } from './support/disposable.js';
import { eventually } from './support/eventually.js';

const redis = useDisposableRedis({ reconnectMs: 50 });
const lease = { leaseMs: 10_000, retentionMs: 60_000 };
const outcome = {
  status: 200,
  headers: [],
  body: Buffer.from('ok'),
  encoding: 'identity',
  storage: 'inline',
} as const;

/** How many NOSCRIPT answers the server gave so far (`INFO errorstats`). */
async function noscripts(): Promise<number> {
  const info = await redis.admin.info('errorstats');
  return Number(/errorstat_NOSCRIPT:count=(\d+)/.exec(info)?.[1] ?? 0);
}

/** How many WAITs the server ran so far (`INFO commandstats`). */
async function waits(): Promise<number> {
  const info = await redis.admin.info('commandstats');
  return Number(/cmdstat_wait:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

describe.each(CLIENTS)('RedisStore faults on %s', (name: ClientName) => {
  let made: MadeClient;
  const prefix = `${name}-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    made = await connectClient(name, redis.server.port, { reconnectMs: 50 });
  });
  afterAll(async () => {
    await made?.close();
  });

  it('a killed server fails calls with StoreUnavailableError within a second or two, and a restarted one serves again', async () => {
    const store = new RedisStore({ client: made.client, prefix });
    expect((await store.begin({ key: 'before', fingerprint: 'f', ...lease })).kind).toBe('acquired');
    await redis.server.kill();
    const started = Date.now();
    const calls = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => store.begin({ key: `down-${i}`, fingerprint: 'f', ...lease })),
    );
    for (const call of calls) {
      expect(call.status).toBe('rejected');
      if (call.status === 'rejected')
        expect(isStoreUnavailableError(call.reason), String(call.reason)).toBe(true);
    }
    expect(Date.now() - started).toBeLessThan(3_000);
    await redis.server.restart();
    // An empty server: no record, no script; the same client and store serve again once reconnected.
    const claim = await eventually(() => store.begin({ key: 'after', fingerprint: 'f', ...lease }), 15_000);
    expect(claim.kind).toBe('acquired');
    if (claim.kind !== 'acquired') return;
    expect(await store.complete({ key: 'after', token: claim.token, outcome, retentionMs: 60_000 })).toEqual({
      kind: 'ok',
    });
    expect((await store.begin({ key: 'after', fingerprint: 'f', ...lease })).kind).toBe('replay');
    await store.close();
  }, 40_000);

  it('SCRIPT FLUSH: the next calls meet NOSCRIPT and succeed anyway, the durable complete too', async () => {
    await eventually(async () => redis.admin.ping(), 10_000);
    const store = new RedisStore({ client: made.client, prefix });
    const durable = new RedisStore({ client: made.client, prefix, durable: { replicas: 1, timeoutMs: 10 } });
    // Warm: every script this test uses has run once on this connection.
    const first = await eventually(() => store.begin({ key: 'warm', fingerprint: 'f', ...lease }), 15_000);
    if (first.kind !== 'acquired') throw new Error(first.kind);
    await store.complete({ key: 'warm', token: first.token, outcome, retentionMs: 60_000 });
    await store.get('warm');

    await redis.admin.script('FLUSH');
    const before = await noscripts();
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.begin({ key: `flushed-${i}`, fingerprint: 'f', ...lease })),
    );
    expect(claims.map((c) => c.kind)).toEqual(claims.map(() => 'acquired'));
    expect(await noscripts()).toBeGreaterThan(before);

    await redis.admin.script('FLUSH');
    const flushedAgain = await noscripts();
    const waitsBefore = await waits();
    const claim = claims[0]!;
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    // No replica answers WAIT here: the shortfall is reported, and the record was stored through EVAL.
    await expect(
      durable.complete({ key: 'flushed-0', token: claim.token, outcome, retentionMs: 60_000 }),
    ).rejects.toSatisfy(isStoreUnavailableError);
    expect((await store.get('flushed-0'))?.state).toBe('completed');
    expect(await noscripts()).toBeGreaterThan(flushedAgain);
    // The WAIT went again after the EVAL: one that answered before the script ran would vouch for nothing.
    expect((await waits()) - waitsBefore).toBe(2);
    await store.close();
    await durable.close();
  }, 40_000);
});

describe('RedisStore on node-redis with its offline queue on (its default)', () => {
  it('refuses a call while the client reconnects, so it never runs late once the server is back', async () => {
    await eventually(async () => redis.admin.ping(), 10_000);
    const client = createClient({
      socket: { host: '127.0.0.1', port: redis.server.port, reconnectStrategy: () => 50 },
    });
    client.on('error', () => {});
    await client.connect();
    const store = new RedisStore({ client, prefix: `queue-${randomUUID().slice(0, 8)}` });
    try {
      await redis.server.kill();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await expect(store.begin({ key: 'late', fingerprint: 'f', ...lease })).rejects.toSatisfy(
        isStoreUnavailableError,
      );
      await redis.server.restart();
      await eventually(async () => {
        if (!client.isReady) throw new Error('not ready yet');
      }, 15_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // A begin that had waited in node-redis' offline queue would have claimed the key after the reconnect.
      expect(await store.get('late')).toBeUndefined();
    } finally {
      await store.close();
      client.destroy();
    }
  }, 40_000);
});
