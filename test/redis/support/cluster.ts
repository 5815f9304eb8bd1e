import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { type RedisProcess, startRedis, stopAll } from './redis-server.js';

const run = promisify(execFile);

export interface RedisCluster {
  readonly nodes: readonly RedisProcess[];
  readonly startupNodes: ReadonlyArray<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/** A real Redis Cluster of `masters` nodes on free ports, built with `redis-cli --cluster create`. */
export async function startCluster(masters = 3): Promise<RedisCluster> {
  const nodes: RedisProcess[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'oncely-cluster-'));
      nodes.push(
        await startRedis({
          dir,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')],
        }),
      );
    }
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    await Promise.all(nodes.map((n) => waitForClusterOk(n.port)));
  } catch (error) {
    await stopAll(nodes);
    throw error;
  }
  return {
    nodes,
    startupNodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    stop: () => stopAll(nodes),
  };
}

async function waitForClusterOk(port: number): Promise<void> {
  const client = new Redis({ port, host: '127.0.0.1' });
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      const info = await client.cluster('INFO');
      if (info.includes('cluster_state:ok')) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`cluster node ${port} never reached cluster_state:ok`);
  } finally {
    client.disconnect();
  }
}
