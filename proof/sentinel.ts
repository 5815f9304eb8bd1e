// The Sentinel store of the HTTP proof: a master, a replica and a Sentinel, each a disposable redis-server of the
// run's own, with an append-only file fsynced on every write. The app servers reach the data nodes through fault
// proxies (ioredis `natMap` maps the addresses Sentinel announces to them) and Sentinel directly, and use
// `durable: { replicas: 1 }`: a complete is confirmed only once the replica has it (docs/stores/redis.md#durable).
//
// Its "store restart" is a failover under traffic: the first a forced `SENTINEL FAILOVER`, the next a SIGKILL of
// the current master (down long enough for Sentinel to promote the replica, then restarted from its AOF, and
// re-pointed at the new master by Sentinel). During each, a probe measures what the same store WITHOUT `durable`
// would have lost: a plain RedisStore of its own keeps completing fresh keys through the failover, and afterwards
// the keys whose complete was acknowledged and that the new master does not have are counted.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisStore } from '../src/stores/redis/index.js';
import { freePort, type RedisProcess, startRedis, stopAll } from '../test/redis/support/redis-server.js';
import { redisPeek } from './peek-redis.js';
import { type FaultProxy, startFaultProxy } from './proxy.js';
import type { StoreUnderTest } from './stores.js';

export const SENTINEL_MASTER = 'oncely-proof';
const PERSISTENT = ['--appendonly', 'yes', '--appendfsync', 'always', '--repl-diskless-sync-delay', '0'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A client of the current master through Sentinel, with the options docs/stores/redis.md recommends, plus one
 * thing they lack. Found by this proof: when Sentinel's `+switch-master` reaches ioredis (`failoverDetector`)
 * while the client is reconnecting, ioredis can end the connection for good (status `end`: no more retries), and
 * the store answers 503 until the process restarts; it happened to all four app servers in one run. So the client
 * connects again on `end`, unless it is being closed (`close()`).
 */
export function sentinelClient(
  sentinelPort: number,
  natMap?: Record<string, { host: string; port: number }>,
): Redis & { close(): void } {
  const client = new Redis({
    sentinels: [{ host: '127.0.0.1', port: sentinelPort }],
    name: SENTINEL_MASTER,
    ...(natMap === undefined ? {} : { natMap }),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    failoverDetector: true,
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
    retryStrategy: () => 100,
  });
  client.on('error', () => {});
  let closing = false;
  client.on('end', () => {
    if (closing) return;
    process.stderr.write('ioredis ended its Sentinel connection (status end); connecting again\n');
    setTimeout(() => void client.connect().catch(() => {}), 100);
  });
  return Object.assign(client, {
    close() {
      closing = true;
      client.disconnect();
    },
  });
}

async function waitForLink(port: number): Promise<void> {
  const client = new Redis({ port, host: '127.0.0.1' });
  try {
    for (let attempt = 0; attempt < 400; attempt++) {
      if ((await client.info('replication')).includes('master_link_status:up')) return;
      await sleep(25);
    }
    throw new Error(`replica ${port} never linked to its master`);
  } finally {
    client.disconnect();
  }
}

interface Probe {
  readonly acknowledged: string[];
  readonly errors: number;
}

/** begin + complete on fresh keys through a plain (non-durable) store until `done()`. */
async function probe(store: RedisStore, name: string, done: () => boolean): Promise<Probe> {
  const result: Probe = { acknowledged: [], errors: 0 };
  for (let i = 0; !done(); i++) {
    const key = `${name}-${i}`;
    try {
      const claim = await store.begin({ key, fingerprint: 'f', leaseMs: 10_000, retentionMs: 600_000 });
      if (claim.kind !== 'acquired') continue;
      await store.complete({
        key,
        token: claim.token,
        outcome: {
          status: 201,
          headers: [],
          body: Buffer.from(key),
          encoding: 'identity',
          storage: 'inline',
        },
        retentionMs: 600_000,
      });
      result.acknowledged.push(key);
    } catch {
      (result as { errors: number }).errors++;
      await sleep(20);
    }
  }
  return result;
}

export async function startSentinelStore(prefix: string): Promise<StoreUnderTest> {
  const nodes: RedisProcess[] = [];
  let sentinel: RedisProcess | undefined;
  try {
    nodes.push(await startRedis({ args: PERSISTENT }));
    nodes.push(
      await startRedis({ args: [...PERSISTENT, '--replicaof', '127.0.0.1', String(nodes[0]!.port)] }),
    );
    await waitForLink(nodes[1]!.port);
    const dir = mkdtempSync(join(tmpdir(), 'oncely-proof-sentinel-'));
    const config = join(dir, 'sentinel.conf');
    writeFileSync(
      config,
      [
        `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${nodes[0]!.port} 1`,
        `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
        `sentinel failover-timeout ${SENTINEL_MASTER} 10000`,
        '',
      ].join('\n'),
    );
    sentinel = await startRedis({ port: await freePort(), dir, sentinelConfig: config });
  } catch (error) {
    await stopAll([...nodes, sentinel]);
    throw error;
  }
  const proxies: FaultProxy[] = await Promise.all(nodes.map((node) => startFaultProxy(node.port)));
  const natMap = Object.fromEntries(nodes.map((node, i) => [`127.0.0.1:${node.port}`, proxies[i]!.port]));
  const sentinelAdmin = new Redis({ port: sentinel.port, host: '127.0.0.1' });
  const admin = sentinelClient(sentinel.port);
  const masterPort = async () =>
    Number(
      ((await sentinelAdmin.call('SENTINEL', 'get-master-addr-by-name', SENTINEL_MASTER)) as string[])[1],
    );
  const probeClient = sentinelClient(sentinel.port);
  const probeStore = new RedisStore({ client: probeClient, prefix: `${prefix}-probe` });
  let failovers = 0;

  /** Runs `trigger` while the plain probe completes keys; resolves once the new master serves, with the probe's loss. */
  async function failover(trigger: (oldPort: number) => Promise<string>): Promise<string> {
    const oldPort = await masterPort();
    let switched = false;
    let settledAt = 0;
    const running = probe(probeStore, `f${failovers}`, () => switched && Date.now() > settledAt);
    await sleep(300);
    const how = await trigger(oldPort);
    const startedAt = Date.now();
    while ((await masterPort().catch(() => oldPort)) === oldPort) {
      if (Date.now() - startedAt > 60_000) throw new Error('Sentinel did not promote a replica within 60 s');
      await sleep(50);
    }
    const newPort = await masterPort();
    const promotedAfter = Date.now() - startedAt;
    settledAt = Date.now() + 1_000;
    switched = true;
    const result = await running;
    await sleep(500);
    let lost = 0;
    for (const key of result.acknowledged)
      if ((await probeStore.get(key).catch(() => null)) === undefined) lost++;
    failovers++;
    return `${how}; Sentinel promoted :${newPort} after ${promotedAfter} ms. A plain store without \`durable\`, completing keys through the same failover: ${lost} of ${result.acknowledged.length} acknowledged completes lost (${result.errors} calls failed)`;
  }

  return {
    kind: 'sentinel',
    connection: {
      kind: 'sentinel',
      sentinelPort: sentinel.port,
      name: SENTINEL_MASTER,
      natMap,
      durable: { replicas: 1, timeoutMs: 500 },
    },
    proxies,
    restartLabel: { name: 'Sentinel failover', kind: 'failover' },
    restart(downMs) {
      if (failovers % 2 === 0)
        return failover(async () => {
          for (let attempt = 0; ; attempt++) {
            try {
              await sentinelAdmin.call('SENTINEL', 'FAILOVER', SENTINEL_MASTER);
              return '`SENTINEL FAILOVER` (forced, under traffic)';
            } catch (error) {
              // NOGOODSLAVE until Sentinel has heard from the replica; INPROG while one runs.
              if (attempt > 200) throw error;
              await sleep(100);
            }
          }
        });
      return (async () => {
        let killed: { index: number; node: RedisProcess; at: number } | undefined;
        // Down until Sentinel promoted the replica (1 s down-after plus the election), then back from its AOF.
        const downFor = Math.max(downMs, 4_000);
        const detail = await failover(async (oldPort) => {
          const index = nodes.findIndex((node) => node.port === oldPort);
          const node = nodes[index]!;
          await node.kill();
          killed = { index, node, at: Date.now() };
          return `SIGKILL of the master :${oldPort}`;
        });
        const { index, node, at } = killed!;
        await sleep(at + downFor - Date.now());
        nodes[index] = await startRedis({ port: node.port, dir: node.dir, args: PERSISTENT });
        return `${detail}; the old master restarted ${downFor} ms after the kill, from its AOF`;
      })();
    },
    peek: redisPeek(admin, prefix),
    async scriptFlush() {
      for (const node of nodes) {
        const client = new Redis({ port: node.port, host: '127.0.0.1' });
        await client.script('FLUSH').finally(() => client.disconnect());
      }
      return 'SCRIPT FLUSH on the master and the replica';
    },
    async close() {
      admin.close();
      probeClient.close();
      sentinelAdmin.disconnect();
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await stopAll([...nodes, sentinel]);
    },
  };
}
