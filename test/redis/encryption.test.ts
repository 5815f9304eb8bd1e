import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { RedisStore } from '../../src/stores/redis/index.js';
import { runEncryptionAtRest } from '../support/encryption-suite.js';
import { requireService, services } from '../support/services.js';

// The machine's Redis, shared with other files: each store gets a random prefix. The value at rest is the record's
// STRING as GET returns it; copying and tampering write that STRING with SET, as anyone with Redis access could.
let admin: Redis;
let client: Redis;

beforeAll(async () => {
  await requireService('redis');
  client = new Redis(services.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  admin = new Redis(services.redis.url);
  await new Promise((resolve) => client.once('ready', resolve));
});

afterAll(async () => {
  await Promise.all([client.quit(), admin.quit()]);
});

const prefixes = new WeakMap<RedisStore, string>();
const recordKey = (store: RedisStore, key: string) => `${prefixes.get(store)}:{${key}}`;

async function value(store: RedisStore, key: string): Promise<Buffer> {
  const bytes = await admin.getBuffer(recordKey(store, key));
  if (bytes === null) throw new Error(`no Redis value for ${key}`);
  return bytes;
}

runEncryptionAtRest<RedisStore>({
  name: 'RedisStore',
  store: () => {
    const prefix = `oncely-test-enc-${randomUUID().slice(0, 8)}`;
    const store = new RedisStore({ client, prefix });
    prefixes.set(store, prefix);
    return store;
  },
  raw: value,
  copy: async (store, from, to) => {
    await admin.set(recordKey(store, to), await value(store, from), 'PX', 60_000);
  },
  tamper: async (store, key) => {
    const bytes = await value(store, key);
    // The sealed outcome is the end of the value (the GCM tag is its last 16 bytes): this flips ciphertext.
    bytes[bytes.length - 20]! ^= 1;
    await admin.set(recordKey(store, key), bytes, 'KEEPTTL');
  },
});
