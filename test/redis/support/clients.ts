/**
 * @module The clients a RedisStore runs on, made the way docs/stores/redis.md recommends for each: ioredis,
 * iovalkey, node-redis (`redis` 5) and Valkey GLIDE, against one server (a port) or a Cluster (its startup
 * nodes). Each test file that runs the store on every client loops over `CLIENTS`. Each client's package is loaded
 * when the first client of it is made, so a worker process on one client does not load the other three (a second
 * or more of CPU per process on this machine).
 */
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

/** The GLIDE package, its core's logging turned down first. */
async function glide(): Promise<typeof import('@valkey/valkey-glide')> {
  const glidePackage = await import('@valkey/valkey-glide');
  // GLIDE's core logs every server error it relays (each NOSCRIPT the store recovers from) as a warning.
  glidePackage.Logger.setLoggerConfig('error');
  return glidePackage;
}

/**
 * GLIDE's own settings a test changes (the other clients have no such things). `requestTimeout` (1 s unless given)
 * bounds each call: a call made while the server is down fails when it passes. `inflightRequestsLimit` (GLIDE's
 * default: 1,000) is how many calls one client has awaiting replies before it refuses more at once.
 */
export interface GlideSettings {
  readonly requestTimeout?: number;
  readonly inflightRequestsLimit?: number;
}

/**
 * A client of `name` on one server, connected. `reconnectMs`: how often it redials after the server went away
 * (GLIDE, only when given: its backoff held near that, where its own grows to seconds after an outage).
 */
export async function connectClient(
  name: ClientName,
  port: number,
  options: { reconnectMs?: number; glide?: GlideSettings } = {},
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
      const client =
        name === 'ioredis'
          ? new (await import('ioredis')).Redis(options)
          : new (await import('iovalkey')).Redis(options);
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
      const { createClient } = await import('redis');
      const client = createClient({
        socket: { host, port, reconnectStrategy: () => reconnectMs },
        disableOfflineQueue: true,
      });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => client.destroy() };
    }
    case 'glide': {
      const { GlideClient } = await glide();
      const client = await GlideClient.createClient({
        addresses: [{ host, port }],
        requestTimeout: 1_000,
        ...options.glide,
        ...(options.reconnectMs === undefined
          ? {}
          : { connectionBackoff: { numberOfRetries: 1, factor: options.reconnectMs, exponentBase: 2 } }),
      });
      return { client, close: async () => client.close() };
    }
  }
}

/** A Cluster client of `name` on the nodes given, connected. */
export async function connectCluster(
  name: ClientName,
  nodes: readonly Address[],
  options: { glide?: GlideSettings } = {},
): Promise<MadeClient> {
  switch (name) {
    case 'ioredis':
    case 'iovalkey': {
      const options = { enableOfflineQueue: false, redisOptions: { maxRetriesPerRequest: 0 } };
      const client =
        name === 'ioredis'
          ? new (await import('ioredis')).Cluster([...nodes], options)
          : new (await import('iovalkey')).Cluster([...nodes], options);
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
      const { createCluster } = await import('redis');
      const client = createCluster({
        rootNodes: nodes.map((n) => ({ socket: { host: n.host, port: n.port } })),
        defaults: { disableOfflineQueue: true },
      });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => client.destroy() };
    }
    case 'glide': {
      const { GlideClusterClient } = await glide();
      const client = await GlideClusterClient.createClient({
        addresses: nodes.map((n) => ({ host: n.host, port: n.port })),
        requestTimeout: 1_000,
        ...options.glide,
      });
      return { client, close: async () => client.close() };
    }
  }
}

/** A second GLIDE client on the same server, for `subscriber` (a GLIDE client cannot be duplicated). */
export async function glideSubscriber(port: number): Promise<MadeClient> {
  const client = await (await glide()).GlideClient.createClient({
    addresses: [{ host, port }],
    requestTimeout: 1_000,
  });
  return { client, close: async () => client.close() };
}
