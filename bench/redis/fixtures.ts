import { Redis } from 'ioredis';
import { Engine } from '../../src/core/engine.js';
import { scopedKey } from '../../src/core/key.js';
import type { StoredOutcome } from '../../src/core/store.js';
import type { RedisStore } from '../../src/stores/redis/index.js';
import { type RedisProcess, startRedis, stopAll } from '../../test/redis/support/redis-server.js';

/** A disposable redis-server of the benchmark's own, so INFO commandstats and CPU see nothing else. */
export interface Bench {
  readonly server: RedisProcess;
  /** The connection under test (the options docs/stores/redis.md recommends). */
  readonly client: Redis;
  /** A second connection for INFO, CONFIG and MEMORY, so measuring does not disturb the client under test. */
  readonly admin: Redis;
  close(): Promise<void>;
}

export async function startBench(): Promise<Bench> {
  const server = await startRedis();
  const client = new Redis({
    port: server.port,
    host: '127.0.0.1',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  const admin = new Redis({ port: server.port, host: '127.0.0.1' });
  await Promise.all([client, admin].map((c) => new Promise((resolve) => c.once('ready', resolve))));
  return {
    server,
    client,
    admin,
    async close() {
      client.disconnect();
      admin.disconnect();
      await stopAll([server]);
    },
  };
}

/** Keys as the engine makes them: a 43-character SHA-256 of scope and client key. */
export const engineKey = (label: string) => scopedKey('bench', label);

export const newEngine = (store: RedisStore) => new Engine({ store, breaker: false });

/** A JSON body of about `bytes` bytes that looks like an API answer (ids, names, amounts), not like random noise. */
export function jsonBody(bytes: number, seed: number): Buffer {
  let state = seed >>> 0 || 1;
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4_294_967_296;
  };
  const words = [
    'espresso',
    'notebook',
    'cable',
    'lamp',
    'backpack',
    'charger',
    'mug',
    'pen',
    'sticker',
    'bottle',
  ];
  const items: object[] = [];
  const head = {
    id: `pay_${Math.floor(random() * 1e12).toString(36)}`,
    status: 'succeeded',
    currency: 'EUR',
    items,
  };
  while (JSON.stringify(head).length < bytes) {
    items.push({
      sku: `SKU-${Math.floor(random() * 1e6)}`,
      name: `${words[Math.floor(random() * words.length)]} ${words[Math.floor(random() * words.length)]}`,
      quantity: 1 + Math.floor(random() * 5),
      unitAmount: Math.floor(random() * 10_000),
    });
  }
  return Buffer.from(JSON.stringify(head).slice(0, bytes));
}

export const outcomeOf = (body: Uint8Array): StoredOutcome => ({
  status: 201,
  headers: [['content-type', 'application/json']],
  body,
  encoding: 'identity',
  storage: 'inline',
});
