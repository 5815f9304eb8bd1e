/**
 * @module The Redis client a command uses: `REDIS_URL` with the options the Redis store's page advises.
 */
import type { Redis, RedisOptions } from 'ioredis';
import { redisUrl } from './connection-url.js';
import { CommandFailed } from './errors.js';
import { requirePeer } from './peer.js';

/**
 * The options docs/stores/redis.md advises for a store's client: no offline queue (a command sent while
 * disconnected fails instead of waiting to run late) and no resending of commands a dropped connection had in
 * flight. `lazyConnect` lets the CLI await the first connection and report it failing in its own words.
 */
export const CLI_REDIS_OPTIONS = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  // After a failed first connect, disconnect() ends the already closed socket and arms this timer, which nothing
  // clears: the failed command would linger 2 s (the default) before exiting. A live socket closes far sooner.
  disconnectTimeout: 100,
} as const satisfies RedisOptions;

/** A connected Redis client from REDIS_URL (localhost by default), or a one-line failure. */
export async function openRedisClient(): Promise<{ client: Redis; url: string }> {
  const { url, shown } = redisUrl();
  const { Redis } = await requirePeer<typeof import('ioredis')>('ioredis');
  const client = new Redis(url, CLI_REDIS_OPTIONS);
  // Without an 'error' listener ioredis prints "[ioredis] Unhandled error event" and a stack for every failed
  // (re)connect. The first connection's error goes into the CLI's message; later ones (Redis lost while
  // `demo --serve` runs) get one line per outage, as ioredis keeps reconnecting by itself.
  let lastError: Error | undefined;
  let connected = false;
  let outageReported = false;
  client.on('error', (error: Error) => {
    lastError = error;
    if (!connected || outageReported) return;
    outageReported = true;
    process.stderr.write(`oncely: lost Redis at ${shown} (${error.message}); reconnecting\n`);
  });
  client.on('ready', () => {
    outageReported = false;
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw new CommandFailed(
      `cannot connect to Redis at ${shown} (${(lastError ?? (error as Error)).message}); check REDIS_URL or start redis-server`,
    );
  }
  connected = true;
  return { client, url: shown };
}
