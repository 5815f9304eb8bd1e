/** @module One redis-server per test file, in vitest hooks: `useDisposableRedis()` (the server is redis-server.ts's). */
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { type RedisProcess, startRedis, stopAll, storeClient } from './redis-server.js';

export interface DisposableRedis {
  /** The redis-server of this test file: its port, and the process to pause or kill. */
  readonly server: RedisProcess;
  /** The client a store gets, with the options docs/stores/redis.md recommends (fail fast, no offline queue). */
  readonly client: Redis;
  /** A plain client for assertions and admin commands. */
  readonly admin: Redis;
}

/**
 * A redis-server of the test file's own on a free port, started before its tests and stopped after them. Call at
 * the top level of a test file; read the fields inside tests and hooks (they are set once `beforeAll` ran).
 * `reconnectMs`: the store client reconnects that often, for files that kill the server (see `storeClient`).
 */
export function useDisposableRedis(options: { reconnectMs?: number } = {}): DisposableRedis {
  let server: RedisProcess | undefined;
  let client: Redis | undefined;
  let admin: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis();
    client = await storeClient(server.port, options);
    admin = new Redis({ port: server.port, host: '127.0.0.1' });
    // A file that kills its server on purpose: the admin client's reconnect errors are expected too.
    if (options.reconnectMs !== undefined) admin.on('error', () => {});
  });
  afterAll(async () => {
    client?.disconnect();
    admin?.disconnect();
    await stopAll([server]);
  });
  const started = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`useDisposableRedis: ${name} is read before beforeAll ran`);
    return value;
  };
  return {
    get server() {
      return started(server, 'server');
    },
    get client() {
      return started(client, 'client');
    },
    get admin() {
      return started(admin, 'admin');
    },
  };
}
