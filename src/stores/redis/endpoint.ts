/**
 * @module Where the Redis store's client points, as telemetry names it (`db.system.name`, server address and port,
 * the database number), read from the client's options without a round trip.
 */
import type { StoreEndpoint } from '../../core/store.js';
import { isCluster, type RedisClient } from './scripts.js';

/**
 * The Redis server as the client was configured, for telemetry. A Cluster spreads keys over nodes and Sentinel
 * names the master only once connected, so neither names an address here: each command's node is the driver's
 * to report.
 */
export function redisEndpoint(client: RedisClient): StoreEndpoint {
  if (isCluster(client)) return { system: 'redis' };
  const { host, port, path, db, sentinels } = client.options;
  const namespace = String(db ?? 0);
  if (sentinels !== null && sentinels !== undefined) return { system: 'redis', namespace };
  if (typeof path === 'string' && path !== '') return { system: 'redis', address: path, namespace };
  return {
    system: 'redis',
    ...(typeof host === 'string' ? { address: host } : {}),
    ...(typeof port === 'number' ? { port } : {}),
    namespace,
  };
}
