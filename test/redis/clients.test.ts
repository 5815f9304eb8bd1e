/**
 * RedisStore on every client it takes (ioredis, iovalkey, node-redis, Valkey GLIDE), against one disposable
 * redis-server shared by the file: the Store contract, a TTL on every record, `idempotent()` under concurrent
 * calls, binary bodies, and `waitFor` woken by pub/sub (GLIDE: on a subscriber the caller passes, else polling).
 */
import { randomUUID } from 'node:crypto';
import { Redis as IoredisRedis } from 'ioredis';
import { Redis as IovalkeyRedis } from 'iovalkey';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCorruptRecordError } from '../../src/core/errors.js';
import { idempotent } from '../../src/idempotent.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import {
  CLIENTS,
  type ClientName,
  connectClient,
  glideSubscriber,
  type MadeClient,
} from './support/clients.js';
import { useDisposableRedis } from './support/disposable.js';

const redis = useDisposableRedis();
const lease = { leaseMs: 10_000, retentionMs: 60_000 };
const outcome = (body: Uint8Array) =>
  ({
    status: 201,
    headers: [['content-type', 'application/octet-stream']],
    body,
    encoding: 'identity',
    storage: 'inline',
  }) as const;

describe.each(CLIENTS)('RedisStore on %s', (name: ClientName) => {
  let made: MadeClient;
  const prefix = () => `${name}-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    made = await connectClient(name, redis.server.port);
  });
  afterAll(async () => {
    await made?.close();
  });

  runStoreConformance({
    name: `RedisStore on ${name}`,
    harness: { describe, it },
    createStore: ({ clock }) => new RedisStore({ client: made.client, clock, prefix: prefix() }),
    destroyStore: (store) => (store as RedisStore).close(),
  });

  it('gives every record a TTL that covers its retention: claimed, completed, released', async () => {
    const store = new RedisStore({ client: made.client, prefix: prefix() });
    const ttl = (key: string) => redis.admin.pttl(store.keys.record(key));
    const claim = await store.begin({ key: 'a', fingerprint: 'f', ...lease });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    expect(await ttl('a')).toBeGreaterThan(lease.retentionMs - 1_000);
    expect(
      await store.complete({
        key: 'a',
        token: claim.token,
        outcome: outcome(new Uint8Array(3)),
        retentionMs: 60_000,
      }),
    ).toEqual({ kind: 'ok' });
    expect(await ttl('a')).toBeGreaterThan(59_000);
    const other = await store.begin({ key: 'b', fingerprint: 'f', ...lease });
    if (other.kind !== 'acquired') throw new Error(other.kind);
    await store.release({ key: 'b', token: other.token });
    expect(await ttl('b')).toBeGreaterThan(0);
    await store.close();
  });

  it('replays a binary body byte for byte (NULs, invalid UTF-8, every byte value)', async () => {
    const store = new RedisStore({ client: made.client, prefix: prefix() });
    const body = new Uint8Array(512).map((_, i) => (i * 7) % 256);
    const claim = await store.begin({ key: 'bin', fingerprint: 'f', ...lease });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await store.complete({ key: 'bin', token: claim.token, outcome: outcome(body), retentionMs: 60_000 });
    const replay = await store.begin({ key: 'bin', fingerprint: 'f', ...lease });
    if (replay.kind !== 'replay') throw new Error(replay.kind);
    expect(Buffer.from(replay.outcome.body).equals(Buffer.from(body))).toBe(true);
    expect(Buffer.from((await store.get('bin'))!.outcome!.body).equals(Buffer.from(body))).toBe(true);
    await store.close();
  });

  it('reports a key of another type as a CorruptRecordError, never a wrong answer', async () => {
    const store = new RedisStore({ client: made.client, prefix: prefix() });
    await redis.admin.rpush(store.keys.record('list'), 'x');
    await redis.admin.set(store.keys.record('text'), 'not a record');
    for (const key of ['list', 'text']) {
      await expect(store.begin({ key, fingerprint: 'f', ...lease })).rejects.toSatisfy(isCorruptRecordError);
      await expect(store.get(key)).rejects.toSatisfy(isCorruptRecordError);
    }
    await store.close();
  });

  it('idempotent(): 20 keys x 20 concurrent calls run each key once, and every caller gets its value', async () => {
    const store = new RedisStore({ client: made.client, prefix: prefix() });
    const runs = new Map<string, number>();
    const charge = idempotent(
      async (order: { id: string }) => {
        runs.set(order.id, (runs.get(order.id) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { charged: order.id };
      },
      { store, key: (order) => order.id, scope: 'charge', waitMs: 5_000 },
    );
    const ids = Array.from({ length: 20 }, (_, i) => `order-${i}`);
    const calls = ids.flatMap((id) => Array.from({ length: 20 }, () => charge({ id })));
    const values = await Promise.all(calls);
    expect(values).toEqual(ids.flatMap((id) => Array.from({ length: 20 }, () => ({ charged: id }))));
    expect([...runs.values()]).toEqual(ids.map(() => 1));
    expect(runs.size).toBe(20);
    await store.close();
  });

  it('waitFor wakes on the completion itself, long before the next poll', async () => {
    const subscriber = name === 'glide' ? await glideSubscriber(redis.server.port) : undefined;
    const store = new RedisStore({
      client: made.client,
      prefix: prefix(),
      pollIntervalMs: 30_000,
      ...(subscriber === undefined ? {} : { subscriber: subscriber.client }),
    });
    try {
      const claim = await store.begin({ key: 'w', fingerprint: 'f', ...lease });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      const started = Date.now();
      const waited = store.waitFor('w', { timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await store.complete({
        key: 'w',
        token: claim.token,
        outcome: outcome(new Uint8Array(1)),
        retentionMs: 60_000,
      });
      expect(await waited).toBe(true);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await store.close();
      await subscriber?.close();
    }
  });

  it.runIf(name === 'ioredis' || name === 'iovalkey')(
    "a client's keyPrefix: records under it, found by stats() and the inspector",
    async () => {
      const options = { port: redis.server.port, host: '127.0.0.1', keyPrefix: 'app:' };
      const prefixed = name === 'ioredis' ? new IoredisRedis(options) : new IovalkeyRedis(options);
      const store = new RedisStore({ client: prefixed, prefix: prefix() });
      try {
        const claim = await store.begin({ key: 'kp', fingerprint: 'f', ...lease });
        if (claim.kind !== 'acquired') throw new Error(claim.kind);
        expect(await redis.admin.exists(`app:${store.keys.record('kp')}`)).toBe(1);
        expect((await store.stats()).inProgress).toBe(1);
        const survey = await store.inspector.survey({ limit: 10, scanLimit: 10_000 });
        expect(survey.lists.inProgress.map((r) => r.key)).toEqual(['kp']);
      } finally {
        await store.close();
        prefixed.disconnect();
      }
    },
  );

  it('waitFor polls when there is no pub/sub, and stops at its timeout', async () => {
    const store = new RedisStore({ client: made.client, prefix: prefix(), pollIntervalMs: 50 });
    try {
      const claim = await store.begin({ key: 'p', fingerprint: 'f', ...lease });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      expect(await store.waitFor('p', { timeoutMs: 150 })).toBe(false);
      const waited = store.waitFor('p', { timeoutMs: 5_000 });
      await store.release({ key: 'p', token: claim.token });
      expect(await waited).toBe(true);
    } finally {
      await store.close();
    }
  });
});
