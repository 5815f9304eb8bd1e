/**
 * @module The clients a RedisStore runs on, made the way docs/stores/redis.md recommends for each: ioredis,
 * iovalkey, node-redis (`redis` 5) and Valkey GLIDE, against one server (a port) or a Cluster (its startup
 * nodes). Each test file that runs the store on every client loops over `CLIENTS`.
 */
import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide';
import { Cluster as IoredisCluster, Redis as IoredisRedis } from 'ioredis';
import { Cluster as IovalkeyCluster, Redis as IovalkeyRedis } from 'iovalkey';
import { createClient, createCluster } from 'redis';
import type { RedisStoreClient } from '../../../src/stores/redis/index.js';

export type ClientName = 'ioredis' | 'iovalkey' | 'node-redis' | 'glide';

export const CLIENTS: readonly ClientName[] = ['ioredis', 'iovalkey', 'node-redis', 'glide'];

/** A client of the store and how to close it (the store never does). */
export interface MadeClient {
  readonly client: RedisStoreClient;
  close(): Promise<void>;
}

export interface Address {
  readonly host: string;
  readonly port: number;
}

const host = '127.0.0.1';

// GLIDE's core logs every server error it relays (each NOSCRIPT the store recovers from) as a warning.
Logger.setLoggerConfig('error');

/** A client of `name` on one server, connected. `reconnectMs`: how often it redials after the server went away. */
export async function connectClient(
  name: ClientName,
  port: number,
  options: { reconnectMs?: number } = {},
): Promise<MadeClient> {
  const reconnectMs = options.reconnectMs ?? 100;
  switch (name) {
    case 'ioredis':
    case 'iovalkey': {
      const options = {
        host,
        port,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => reconnectMs,
      };
      const client = name === 'ioredis' ? new IoredisRedis(options) : new IovalkeyRedis(options);
      client.on('error', () => {});
      await new Promise((resolve) => client.once('ready', resolve));
      return {
        client,
        close: async () => {
          client.disconnect();
        },
      };
    }
    case 'node-redis': {
      const client = createClient({
        socket: { host, port, reconnectStrategy: () => reconnectMs },
        disableOfflineQueue: true,
      });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => client.destroy() };
    }
    case 'glide': {
      const client = await GlideClient.createClient({ addresses: [{ host, port }], requestTimeout: 1_000 });
      return { client, close: async () => client.close() };
    }
  }
}

/** A Cluster client of `name` on the nodes given, connected. */
export async function connectCluster(name: ClientName, nodes: readonly Address[]): Promise<MadeClient> {
  switch (name) {
    case 'ioredis':
    case 'iovalkey': {
      const options = { enableOfflineQueue: false, redisOptions: { maxRetriesPerRequest: 0 } };
      const client =
        name === 'ioredis'
          ? new IoredisCluster([...nodes], options)
          : new IovalkeyCluster([...nodes], options);
      client.on('error', () => {});
      await new Promise((resolve) => client.once('ready', resolve));
      return {
        client,
        close: async () => {
          client.disconnect();
        },
      };
    }
    case 'node-redis': {
      const client = createCluster({
        rootNodes: nodes.map((n) => ({ socket: { host: n.host, port: n.port } })),
        defaults: { disableOfflineQueue: true },
      });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => client.destroy() };
    }
    case 'glide': {
      const client = await GlideClusterClient.createClient({
        addresses: nodes.map((n) => ({ host: n.host, port: n.port })),
        requestTimeout: 1_000,
      });
      return { client, close: async () => client.close() };
    }
  }
}

/** A second GLIDE client on the same server, for `subscriber` (a GLIDE client cannot be duplicated). */
export async function glideSubscriber(port: number): Promise<MadeClient> {
  const client = await GlideClient.createClient({ addresses: [{ host, port }], requestTimeout: 1_000 });
  return { client, close: async () => client.close() };
}
