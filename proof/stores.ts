// The stores under test, each behind fault proxies, and what "restart the store" means for each:
// - redis: a disposable redis-server with an append-only file fsynced on every write (`appendfsync always`), so
//   a SIGKILL loses nothing it acknowledged; killed, down for a moment, restarted on the same port and directory.
// - cluster: three masters built with `redis-cli --cluster create`, the same persistence; one master is killed
//   and restarted (its slots are down meanwhile). The app reaches every node through its own proxy (ioredis
//   `natMap` maps the addresses the cluster announces to the proxies).
// - postgres / postgres-tx / postgres-kysely, -drizzle, -prisma: the machine's PostgreSQL (shared, so never
//   restarted): every backend of the app (by `application_name`, which the ORMs' pools carry too) is terminated
//   with `pg_terminate_backend`, three times over 600 ms; the ledger's and the checker's connections are left alone.
// - mysql / mysql-tx: the machine's MariaDB (shared, so never restarted either): new connections refused for the
//   down time while every app session is KILLed on the server, three times over 600 ms (proof/mysql.ts).
// - dynamodb: a dynalite process of the run's own on a LevelDB directory; SIGKILLed, down for a moment, restarted
//   on the same port and directory (proof/dynamodb.ts).
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { type RedisProcess, startRedis, stopAll } from '../test/redis/support/redis-server.js';
import { startMySqlStore } from './mysql.js';
import { prepareOrm } from './orm-stores.js';
import { redisPeek } from './peek-redis.js';
import { type FaultProxy, startFaultProxy } from './proxy.js';
import { startSentinelStore } from './sentinel.js';
import {
  type FaultRecord,
  isMySql,
  isOrm,
  type PostgresStoreKind,
  type StoreConnection,
  type StoreKind,
} from './types.js';

const run = promisify(execFile);
const PERSISTENT = ['--appendonly', 'yes', '--appendfsync', 'always'];

export interface StoreUnderTest {
  readonly kind: StoreKind;
  readonly connection: StoreConnection;
  readonly proxies: readonly FaultProxy[];
  /** The store's restart fault; resolves when the store answers again, with what was done. */
  restart(downMs: number): Promise<string>;
  /** The record of a storage id as the store has it now (read directly, not through the proxies). */
  peek(id: string): Promise<{ state: 'inProgress' | 'completed' | 'released'; token: number } | undefined>;
  /**
   * How the restart fault is named in the report, when it is not a restart (Sentinel: a failover; MariaDB: its
   * sessions killed and connections refused).
   */
  readonly restartLabel?: { readonly name: string; readonly kind: FaultRecord['kind'] };
  /** Redis only: `SCRIPT FLUSH` on every node. */
  scriptFlush?(): Promise<string>;
  close(): Promise<void>;
}

export async function startStore(
  kind: StoreKind,
  postgres: { url: string; schema: string; applicationName: string },
  prefix: string,
  run: { readonly mysqlUrl: string; readonly keep: boolean },
): Promise<StoreUnderTest> {
  if (kind === 'redis') return startStandalone(prefix);
  if (kind === 'cluster') return startCluster(prefix);
  if (kind === 'sentinel') return startSentinelStore(prefix);
  if (isMySql(kind)) return startMySqlStore(kind, run.mysqlUrl, postgres.schema, run.keep);
  if (kind === 'dynamodb') return (await import('./dynamodb.js')).startDynamoStore(postgres.schema);
  return startPostgres(kind, postgres);
}

async function restartNode(
  node: RedisProcess,
  args: readonly string[],
  downMs: number,
): Promise<RedisProcess> {
  await node.kill();
  await new Promise((resolve) => setTimeout(resolve, downMs));
  return startRedis({ port: node.port, dir: node.dir, args });
}

async function startStandalone(prefix: string): Promise<StoreUnderTest> {
  let node = await startRedis({ args: PERSISTENT });
  const proxy = await startFaultProxy(node.port);
  const admin = new Redis({ port: node.port, host: '127.0.0.1', retryStrategy: () => 50 });
  admin.on('error', () => {});
  return {
    kind: 'redis',
    connection: { kind: 'redis', port: proxy.port },
    proxies: [proxy],
    async restart(downMs) {
      node = await restartNode(node, PERSISTENT, downMs);
      return `redis-server :${node.port} SIGKILL, down ${downMs} ms, restarted from its AOF`;
    },
    peek: redisPeek(admin, prefix),
    async scriptFlush() {
      await flush([node.port]);
      return `SCRIPT FLUSH on :${node.port}`;
    },
    async close() {
      admin.disconnect();
      await proxy.close();
      await stopAll([node]);
    },
  };
}

async function flush(ports: readonly number[]): Promise<void> {
  for (const port of ports) {
    const admin = new Redis({ port, host: '127.0.0.1' });
    try {
      await admin.script('FLUSH');
    } finally {
      admin.disconnect();
    }
  }
}

async function waitForClusterOk(port: number): Promise<void> {
  const client = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 50 });
  client.on('error', () => {});
  try {
    for (let attempt = 0; attempt < 600; attempt++) {
      try {
        const info = (await client.cluster('INFO')) as string;
        if (info.includes('cluster_state:ok')) return;
      } catch {
        // not up yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`cluster node ${port} never reached cluster_state:ok`);
  } finally {
    client.disconnect();
  }
}

async function startCluster(prefix: string): Promise<StoreUnderTest> {
  const nodes: RedisProcess[] = [];
  const argsOf = (dir: string) => [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    join(dir, 'nodes.conf'),
    ...PERSISTENT,
  ];
  try {
    for (let i = 0; i < 3; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'oncely-proof-cluster-'));
      nodes.push(await startRedis({ dir, args: argsOf(dir) }));
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    await Promise.all(nodes.map((n) => waitForClusterOk(n.port)));
  } catch (error) {
    await stopAll(nodes);
    throw error;
  }
  const proxies = await Promise.all(nodes.map((n) => startFaultProxy(n.port)));
  const admin = new Cluster(
    nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    { clusterRetryStrategy: () => 50 },
  );
  admin.on('error', () => {});
  let victim = 0;
  return {
    kind: 'cluster',
    connection: {
      kind: 'cluster',
      nodes: proxies.map((p) => p.port),
      natMap: Object.fromEntries(nodes.map((n, i) => [`127.0.0.1:${n.port}`, proxies[i]!.port])),
    },
    proxies,
    async restart(downMs) {
      const index = victim++ % nodes.length;
      const node = nodes[index]!;
      nodes[index] = await restartNode(node, argsOf(node.dir), downMs);
      await Promise.all(nodes.map((n) => waitForClusterOk(n.port)));
      return `cluster master :${node.port} (1 of 3) SIGKILL, down ${downMs} ms, restarted from its AOF and nodes.conf`;
    },
    peek: redisPeek(admin, prefix),
    async scriptFlush() {
      await flush(nodes.map((n) => n.port));
      return 'SCRIPT FLUSH on all 3 masters';
    },
    async close() {
      admin.disconnect();
      await Promise.all(proxies.map((p) => p.close()));
      await stopAll(nodes);
    },
  };
}

async function startPostgres(
  kind: PostgresStoreKind,
  postgres: { url: string; schema: string; applicationName: string },
): Promise<StoreUnderTest> {
  if (isOrm(kind)) await prepareOrm(kind);
  const target = new URL(postgres.url);
  const proxy = await startFaultProxy(Number(target.port || 5432));
  const viaProxy = new URL(postgres.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  const admin = new pg.Pool({
    connectionString: postgres.url,
    max: 1,
    application_name: `${postgres.schema}-admin`,
  });
  admin.on('error', () => {});
  return {
    kind,
    connection: {
      kind,
      url: viaProxy.toString(),
      schema: postgres.schema,
      applicationName: postgres.applicationName,
    },
    proxies: [proxy],
    async restart() {
      let terminated = 0;
      for (let round = 0; round < 3; round++) {
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, 300));
        const { rows } = await admin.query(
          'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
          [postgres.applicationName],
        );
        terminated += rows[0].n as number;
      }
      return `pg_terminate_backend of every app connection (application_name ${postgres.applicationName}), 3 rounds over 600 ms: ${terminated} backends`;
    },
    async peek(id) {
      const { rows } = await admin.query(
        `SELECT state, token::float8 AS token FROM "${postgres.schema}".oncely_keys WHERE key = $1`,
        [id],
      );
      return rows[0] as { state: 'inProgress' | 'completed' | 'released'; token: number } | undefined;
    },
    async close() {
      await proxy.close();
      await admin.end();
    },
  };
}
