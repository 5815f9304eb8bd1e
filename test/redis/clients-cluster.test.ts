/**
 * RedisStore on a real 3-master Redis Cluster through every client: the conformance kit on iovalkey, node-redis
 * and GLIDE (ioredis has conformance-cluster.test.ts), and on all four a batch of concurrent calls over keys of
 * every master (batched per node), stats() over every master, a durable complete routed to the key's primary,
 * and waitFor across nodes.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreUnavailableError } from '../../src/core/errors.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { CLIENTS, type ClientName, connectCluster, type MadeClient } from './support/clients.js';
import { type RedisCluster, startCluster } from './support/cluster.js';

let cluster: RedisCluster | undefined;
let admins: Redis[] = [];
const lease = { leaseMs: 10_000, retentionMs: 60_000 };
const outcome = {
  status: 200,
  headers: [],
  body: Buffer.from('ok'),
  encoding: 'identity',
  storage: 'inline',
} as const;

beforeAll(async () => {
  cluster = await startCluster(3);
  admins = cluster.nodes.map((n) => new Redis({ port: n.port, host: '127.0.0.1' }));
}, 60_000);

/** MOVED answers given by every master so far: each is a call sent to the wrong node (a round trip lost). */
async function moved(): Promise<number> {
  const infos = await Promise.all(admins.map((admin) => admin.info('errorstats')));
  return infos.reduce((sum, info) => sum + Number(/errorstat_MOVED:count=(\d+)/.exec(info)?.[1] ?? 0), 0);
}

afterAll(async () => {
  for (const admin of admins) admin.disconnect();
  await cluster?.stop();
});

describe.each(CLIENTS)('RedisStore on a 3-master Cluster through %s', (name: ClientName) => {
  let made: MadeClient;
  const prefix = () => `${name}-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    made = await connectCluster(name, cluster!.startupNodes);
  }, 30_000);
  afterAll(async () => {
    await made?.close();
  });

  if (name !== 'ioredis') {
    runStoreConformance({
      name: `RedisStore on a Cluster through ${name}`,
      harness: { describe, it },
      createStore: ({ clock }) => new RedisStore({ client: made.client, clock, prefix: prefix() }),
      destroyStore: (store) => (store as RedisStore).close(),
    });
  }

  it('a batch of 90 concurrent claims over every master: each acquired once, on its own node, counted by stats()', async () => {
    const store = new RedisStore({ client: made.client, prefix: prefix() });
    const keys = Array.from({ length: 90 }, (_, i) => `k${i}`);
    // Warm: the client has its slot map (a first call may be redirected while it learns it).
    await store.get('warm');
    const movedBefore = await moved();
    const claims = await Promise.all(keys.map((key) => store.begin({ key, fingerprint: 'f', ...lease })));
    expect(claims.map((c) => c.kind)).toEqual(keys.map(() => 'acquired'));
    const again = await Promise.all(keys.map((key) => store.begin({ key, fingerprint: 'f', ...lease })));
    expect(again.map((c) => c.kind)).toEqual(keys.map(() => 'inProgress'));
    // Every call went straight to the master of its key's slot.
    expect(await moved()).toBe(movedBefore);
    const perNode = await Promise.all(admins.map((admin) => admin.keys(`${store.keys.prefix}:*`)));
    expect(perNode.every((found) => found.length > 0)).toBe(true);
    expect(perNode.flat().length).toBe(90);
    const stats = await store.stats();
    expect({ records: stats.records, inProgress: stats.inProgress, truncated: stats.truncated }).toEqual({
      records: 90,
      inProgress: 90,
      truncated: false,
    });
    const survey = await store.inspector.survey({ limit: 1_000, scanLimit: 10_000 });
    expect(survey.truncated).toBe(false);
    await store.close();
  });

  it('a durable complete goes to the record primary: its shortfall is reported there (no replicas), the record kept', async () => {
    const store = new RedisStore({
      client: made.client,
      prefix: prefix(),
      durable: { replicas: 1, timeoutMs: 10 },
    });
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) {
      const claim = await store.begin({ key, fingerprint: 'f', ...lease });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      await expect(
        store.complete({ key, token: claim.token, outcome, retentionMs: 60_000 }),
      ).rejects.toSatisfy(isStoreUnavailableError);
      expect((await store.get(key))?.state).toBe('completed');
    }
    await store.close();
  });

  it('waitFor wakes when a record on another node completes', async () => {
    // GLIDE cannot duplicate its client: without a subscriber of the caller's its waiters poll.
    const store = new RedisStore({
      client: made.client,
      prefix: prefix(),
      pollIntervalMs: name === 'glide' ? 100 : 30_000,
    });
    const claim = await store.begin({ key: 'w', fingerprint: 'f', ...lease });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    const started = Date.now();
    const waited = store.waitFor('w', { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await store.complete({ key: 'w', token: claim.token, outcome, retentionMs: 60_000 });
    expect(await waited).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
    await store.close();
  });
});
