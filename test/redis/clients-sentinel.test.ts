/**
 * RedisStore behind Sentinel on the clients that speak it besides ioredis (sentinel.test.ts): iovalkey and
 * node-redis (`createSentinel`). A master, two replicas and a Sentinel; `durable: { replicas: 2 }` completes
 * under load, a forced failover, then: every call failed closed (StoreUnavailableError), the store works on the
 * new primary, and no complete confirmed durable before or during the switch is lost. GLIDE has no Sentinel client.
 */
import { randomUUID } from 'node:crypto';
import { Redis as IovalkeyRedis } from 'iovalkey';
import { createSentinel } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreUnavailableError } from '../../src/core/errors.js';
import { RedisStore, type RedisStoreClient } from '../../src/stores/redis/index.js';
import { MASTER_NAME, type SentinelGroup, startSentinelGroup } from './support/sentinel.js';

let group: SentinelGroup | undefined;
const lease = { leaseMs: 5_000, retentionMs: 600_000 };
const outcome = (text: string) =>
  ({ status: 201, headers: [], body: Buffer.from(text), encoding: 'identity', storage: 'inline' }) as const;

beforeAll(async () => {
  group = await startSentinelGroup(2);
}, 60_000);

afterAll(async () => {
  await group?.stop();
});

type SentinelClientName = 'iovalkey' | 'node-redis';

async function connect(
  name: SentinelClientName,
): Promise<{ client: RedisStoreClient; close(): Promise<void> }> {
  const sentinel = { host: '127.0.0.1', port: group!.sentinel.port };
  if (name === 'iovalkey') {
    const client = new IovalkeyRedis({
      sentinels: [sentinel],
      name: MASTER_NAME,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      failoverDetector: true,
      reconnectOnError: (error) => error.message.startsWith('READONLY'),
      retryStrategy: () => 100,
    });
    client.on('error', () => {});
    await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: async () => client.disconnect() };
  }
  const client = createSentinel({ name: MASTER_NAME, sentinelRootNodes: [sentinel] });
  client.on('error', () => {});
  await client.connect();
  return { client, close: async () => client.destroy() };
}

/** begin + complete on fresh keys until `done(successesSinceLastError)`; what completed, what failed. */
async function load(store: RedisStore, name: string, done: (streak: number) => boolean) {
  const report = { completed: [] as string[], errors: [] as unknown[] };
  const startedAt = Date.now();
  let streak = 0;
  for (let i = 0; !done(streak); i++) {
    if (Date.now() - startedAt > 45_000) throw new Error(`${name}: no recovery within 45 s`);
    const key = `${name}-${i}`;
    try {
      const claim = await store.begin({ key, fingerprint: 'f', ...lease });
      if (claim.kind !== 'acquired') throw new Error(`${key}: ${claim.kind}`);
      const result = await store.complete({
        key,
        token: claim.token,
        outcome: outcome(key),
        retentionMs: 600_000,
      });
      if (result.kind !== 'ok') throw new Error(`${key}: ${result.kind}`);
      report.completed.push(key);
      streak++;
    } catch (error) {
      report.errors.push(error);
      streak = 0;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return report;
}

describe.each(['iovalkey', 'node-redis'] as const)('RedisStore through Sentinel on %s', (name) => {
  it('durable completes survive a failover; the store fails closed meanwhile, then works on the new primary', async () => {
    const { client, close } = await connect(name);
    try {
      const prefix = `${name}-${randomUUID().slice(0, 8)}`;
      const durable = new RedisStore({ client, prefix, durable: { replicas: 2, timeoutMs: 500 } });
      const before = await load(durable, 'before', (streak) => streak >= 30);
      const oldPrimary = await group!.masterPort();
      let switched = false;
      const [during] = await Promise.all([
        load(durable, 'during', (streak) => switched && streak >= 10),
        (async () => {
          await new Promise((resolve) => setTimeout(resolve, 200));
          await group!.failover();
          while ((await group!.masterPort()) === oldPrimary) await new Promise((r) => setTimeout(r, 50));
          switched = true;
        })(),
      ]);
      for (const error of [...before.errors, ...during.errors])
        expect(isStoreUnavailableError(error), String(error)).toBe(true);
      // Writes that succeed after the switch went to the new primary: the old one is a replica (READONLY).
      for (const key of [...before.completed, ...during.completed])
        expect((await durable.get(key))?.state, `${key} was confirmed durable, then lost`).toBe('completed');
      console.info(
        `${name} sentinel failover: ${during.errors.length} StoreUnavailableErrors, ${before.completed.length + during.completed.length} durable completes kept`,
      );
    } finally {
      await close();
    }
  }, 90_000);
});
