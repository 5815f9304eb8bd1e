import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, type RedisProcess, startRedis, stopAll } from './redis-server.js';

export const MASTER_NAME = 'oncely';

export interface SentinelGroup {
  readonly master: RedisProcess;
  readonly replicas: readonly RedisProcess[];
  readonly sentinel: RedisProcess;
  /** A client for the sentinel itself (SENTINEL commands). */
  readonly admin: Redis;
  /** The port Sentinel currently names as master. */
  masterPort(): Promise<number>;
  /** `SENTINEL FAILOVER`, retried until Sentinel has a replica it considers good enough to promote. */
  failover(): Promise<void>;
  stop(): Promise<void>;
}

/** A master, `replicaCount` replicas and one Sentinel (quorum 1), each a process of its own on free ports. */
export async function startSentinelGroup(replicaCount = 1): Promise<SentinelGroup> {
  const started: RedisProcess[] = [];
  try {
    // Replicas sync at once (the default waits 5 s for more replicas to share one transfer).
    const quick = ['--repl-diskless-sync-delay', '0'];
    const master = await startRedis({ args: quick });
    started.push(master);
    const replicas: RedisProcess[] = [];
    for (let i = 0; i < replicaCount; i++) {
      const replica = await startRedis({ args: [...quick, '--replicaof', '127.0.0.1', String(master.port)] });
      started.push(replica);
      replicas.push(replica);
      await waitForLink(replica.port);
    }
    const dir = mkdtempSync(join(tmpdir(), 'oncely-sentinel-'));
    const config = join(dir, 'sentinel.conf');
    writeFileSync(
      config,
      [
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 1`,
        `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
        `sentinel failover-timeout ${MASTER_NAME} 10000`,
        `sentinel parallel-syncs ${MASTER_NAME} 1`,
        '',
      ].join('\n'),
    );
    const sentinel = await startRedis({ port: await freePort(), dir, sentinelConfig: config });
    started.push(sentinel);
    const admin = new Redis({ port: sentinel.port, host: '127.0.0.1' });
    const masterPort = async () => {
      const [, port] = (await admin.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME)) as [
        string,
        string,
      ];
      return Number(port);
    };
    return {
      master,
      replicas,
      sentinel,
      admin,
      masterPort,
      async failover() {
        for (let attempt = 0; ; attempt++) {
          try {
            await admin.call('SENTINEL', 'FAILOVER', MASTER_NAME);
            return;
          } catch (error) {
            // NOGOODSLAVE until Sentinel has heard from the replica; INPROG if one is already running.
            if (attempt > 100) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      },
      async stop() {
        admin.disconnect();
        await stopAll(started);
      },
    };
  } catch (error) {
    await stopAll(started);
    throw error;
  }
}

async function waitForLink(port: number): Promise<void> {
  const client = new Redis({ port, host: '127.0.0.1' });
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      if ((await client.info('replication')).includes('master_link_status:up')) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`replica ${port} never linked to its master`);
  } finally {
    client.disconnect();
  }
}
