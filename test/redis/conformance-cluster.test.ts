import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { isStoreUnavailableError } from '../../src/core/errors.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { type RedisCluster, startCluster } from './support/cluster.js';

// A real 3-master Redis Cluster built for this file: records spread over all slots by their hash tags, and the
// waitFor case crosses nodes (PUBLISH from a script on one master reaches a subscriber on another).
let cluster: RedisCluster | undefined;
const lease = { leaseMs: 10_000, retentionMs: 60_000 };
let client: Cluster;

beforeAll(async () => {
  cluster = await startCluster(3);
  client = new Cluster([...cluster.startupNodes], {
    enableOfflineQueue: false,
    redisOptions: { maxRetriesPerRequest: 0 },
  });
  await new Promise((resolve) => client.once('ready', resolve));
}, 60_000);

afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

runStoreConformance({
  name: 'RedisStore on a 3-master Redis Cluster',
  harness: { describe, it },
  createStore: ({ clock }) => new RedisStore({ client, clock }),
});

describe('RedisStore on a Cluster, beyond the contract', () => {
  it('spreads records over the masters and stats() counts them on every master', async () => {
    const store = new RedisStore({ client, prefix: `spread-${randomUUID().slice(0, 8)}` });
    for (let i = 0; i < 30; i++) {
      assert.equal((await store.begin({ key: `k${i}`, fingerprint: 'f', ...lease })).kind, 'acquired');
    }
    const perNode = await Promise.all(
      client.nodes('master').map((node) => node.keys(`${store.keys.prefix}:*`)),
    );
    assert.equal(perNode.filter((keys) => keys.length > 0).length, 3, 'every master holds some records');
    assert.deepEqual(await store.stats(), {
      records: 30,
      inProgress: 30,
      completed: 0,
      released: 0,
      expired: 0,
      truncated: false,
      bytes: (await store.stats()).bytes,
    });
  });

  it('durable completes pipeline the script and WAIT to the record primary', async () => {
    const store = new RedisStore({
      client,
      prefix: `durable-${randomUUID().slice(0, 8)}`,
      durable: { replicas: 1, timeoutMs: 10 },
    });
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    for (const key of keys) {
      const first = await store.begin({ key, fingerprint: 'f', ...lease });
      assert.ok(first.kind === 'acquired');
      const outcome = {
        status: 200,
        headers: [],
        body: Buffer.from(key),
        encoding: 'identity',
        storage: 'inline',
      } as const;
      // These masters have no replicas: the shortfall is reported, and the record is on its primary.
      await assert.rejects(
        store.complete({ key, token: first.token, outcome, retentionMs: 60_000 }),
        isStoreUnavailableError,
      );
      assert.equal((await store.get(key))?.state, 'completed');
    }
  });
});
