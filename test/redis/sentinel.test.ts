import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { isStoreUnavailableError } from '../../src/core/errors.js';
import type { StoredOutcome } from '../../src/core/store.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { MASTER_NAME, type SentinelGroup, startSentinelGroup } from './support/sentinel.js';

// A master, two replicas and a Sentinel, all processes of this test. A forced failover (SENTINEL FAILOVER) moves
// the primary while requests keep coming: the store fails closed for a short window, then works on the new
// primary through ioredis' Sentinel support; and no complete confirmed by `durable` on every replica is lost.
let group: SentinelGroup | undefined;
let client: Redis;

beforeAll(async () => {
  group = await startSentinelGroup(2);
  client = new Redis({
    sentinels: [{ host: '127.0.0.1', port: group.sentinel.port }],
    name: MASTER_NAME,
    // The Sentinel options docs/stores/redis.md recommends (the reconnect delay is short to keep the test short).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    failoverDetector: true,
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
    retryStrategy: () => 100,
  });
  client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
}, 60_000);

afterAll(async () => {
  client?.disconnect();
  await group?.stop();
});

const RETENTION_MS = 600_000;
const lease = { leaseMs: 5_000, retentionMs: RETENTION_MS };
const outcome = (text: string): StoredOutcome => ({
  status: 201,
  headers: [['content-type', 'text/plain']],
  body: Buffer.from(text),
  encoding: 'identity',
  storage: 'inline',
});

interface LoadReport {
  /** Keys whose complete answered ok. */
  readonly completed: string[];
  readonly errors: Array<{ readonly at: number; readonly error: unknown }>;
}

/** begin + complete on fresh keys until `done(successesSinceLastError)` says stop. */
async function load(store: RedisStore, name: string, done: (streak: number) => boolean): Promise<LoadReport> {
  const report: LoadReport = { completed: [], errors: [] };
  const startedAt = Date.now();
  let streak = 0;
  for (let i = 0; !done(streak); i++) {
    assert.ok(Date.now() - startedAt < 45_000, `${name}: no recovery within 45 s`);
    const key = `${name}-${i}`;
    try {
      const r = await store.begin({ key, fingerprint: 'f', ...lease });
      assert.ok(r.kind === 'acquired');
      const result = await store.complete({
        key,
        token: r.token,
        outcome: outcome(key),
        retentionMs: RETENTION_MS,
      });
      assert.deepEqual(result, { kind: 'ok' });
      report.completed.push(key);
      streak++;
    } catch (error) {
      report.errors.push({ at: Date.now(), error });
      streak = 0;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return report;
}

const windowOf = ({ errors }: LoadReport) => (errors.length === 0 ? 0 : errors.at(-1)!.at - errors[0]!.at);

describe('RedisStore through a Sentinel failover', () => {
  it('fails closed for a bounded window, then works on the new primary; durable completes are never lost', async () => {
    const prefix = `sentinel-${randomUUID().slice(0, 8)}`;
    // `replicas: 2` is every replica: a complete answered ok is on whichever replica Sentinel promotes.
    const durable = new RedisStore({ client, prefix, durable: { replicas: 2, timeoutMs: 500 } });
    const plain = new RedisStore({ client, prefix });
    const before = await load(durable, 'before', (streak) => streak >= 50);

    const oldPrimary = await group!.masterPort();
    let newPrimary: number | undefined;
    const onNewPrimary = () => newPrimary !== undefined && client.stream?.remotePort === newPrimary;
    const [plainLoad, durableLoad] = await Promise.all([
      load(plain, 'plain', (streak) => onNewPrimary() && streak >= 50),
      load(durable, 'durable', (streak) => onNewPrimary() && streak >= 5),
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        await group!.failover();
        while ((await group!.masterPort()) === oldPrimary)
          await new Promise((resolve) => setTimeout(resolve, 50));
        newPrimary = await group!.masterPort();
      })(),
    ]);

    for (const { error } of [...before.errors, ...plainLoad.errors, ...durableLoad.errors]) {
      assert.ok(isStoreUnavailableError(error), String(error));
    }
    assert.ok(plainLoad.errors.length > 0, 'the failover must show as a window of StoreUnavailableError');
    assert.equal(client.stream.remotePort, newPrimary, 'the client followed Sentinel to the new primary');

    // Every complete confirmed on all replicas, before or during the failover, is on the new primary.
    for (const key of [...before.completed, ...durableLoad.completed]) {
      assert.equal((await plain.get(key))?.state, 'completed', `${key} was confirmed durable, then lost`);
    }
    let lost = 0;
    for (const key of plainLoad.completed) if ((await plain.get(key)) === undefined) lost++;
    console.info(
      `sentinel failover: plain store ${plainLoad.errors.length} errors over ${windowOf(plainLoad)} ms, ` +
        `${lost} of ${plainLoad.completed.length} acknowledged completes lost; durable store ` +
        `${durableLoad.errors.length} errors over ${windowOf(durableLoad)} ms, none of ${durableLoad.completed.length} lost`,
    );
  });
});
