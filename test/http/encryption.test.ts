import { randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency } from '../../src/http/express.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { closing, listening } from '../support/listen.js';
import { requireService, services } from '../support/services.js';

// Encryption at rest over HTTP, through Express on the machine's Redis: a replay is the first answer byte for byte,
// and a record that no longer opens (tampered in Redis, or its key dropped from the list) is the documented 500
// problem, with the handler still at one run.
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

const oldKey = { id: 'old', key: randomBytes(32) };
const newKey = { id: 'new', key: randomBytes(32) };

/** An app whose POST /payments counts its runs; closed after the test. */
async function app(prefix: string, keys: (typeof oldKey)[]) {
  const runs = { count: 0 };
  const server = express()
    .post(
      '/payments',
      express.json(),
      idempotency({ store: new RedisStore({ client, prefix }), encryption: { keys } }),
      (_req, res) => {
        runs.count++;
        res
          .status(201)
          .set('location', '/payments/pay_7f3a')
          .json({ id: 'pay_7f3a', iban: 'DE89370400440532013000' });
      },
    )
    .listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${await listening(server)}/payments`;
  const post = (key: string) =>
    fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json', 'idempotency-key': key },
      body: '{"amount":100}',
    });
  return { runs, post, close: closing(server) };
}

/** The one record under `prefix`, as its Redis key. */
async function onlyRecord(prefix: string): Promise<string> {
  const keys = await admin.keys(`${prefix}:{*}`);
  expect(keys).toHaveLength(1);
  return keys[0]!;
}

describe('encryption at rest over HTTP (Express, Redis)', () => {
  it('replays byte for byte, and answers 500 record-unreadable for a tampered record without running again', async () => {
    const prefix = `oncely-test-enc-http-${randomUUID().slice(0, 8)}`;
    const { runs, post, close } = await app(prefix, [oldKey]);
    try {
      const first = await post('k1');
      const firstBody = Buffer.from(await first.arrayBuffer());
      expect(first.status).toBe(201);
      const replay = await post('k1');
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.headers.get('location')).toBe('/payments/pay_7f3a');
      expect(Buffer.from(await replay.arrayBuffer()).equals(firstBody)).toBe(true);
      const record = await onlyRecord(prefix);
      const bytes = (await admin.getBuffer(record))!;
      expect(bytes.includes('DE89370400440532013000')).toBe(false);
      expect(bytes.includes('pay_7f3a')).toBe(false);
      bytes[bytes.length - 20]! ^= 1;
      await admin.set(record, bytes, 'KEEPTTL');
      const refused = await post('k1');
      expect(refused.status).toBe(500);
      expect(refused.headers.get('content-type')).toBe('application/problem+json');
      const problem = (await refused.json()) as { type: string; status: number };
      expect(problem.type).toMatch(/errors\.md#record-unreadable$/);
      expect(problem.status).toBe(500);
      expect(runs.count).toBe(1);
    } finally {
      await close();
    }
  });

  it('answers records sealed under a key after rotation, and 500 once that key is dropped', async () => {
    const prefix = `oncely-test-enc-http-${randomUUID().slice(0, 8)}`;
    const before = await app(prefix, [oldKey]);
    const first = await before.post('k2');
    const firstBody = Buffer.from(await first.arrayBuffer());
    await before.close();
    const rotated = await app(prefix, [newKey, oldKey]);
    const replay = await rotated.post('k2');
    expect(Buffer.from(await replay.arrayBuffer()).equals(firstBody)).toBe(true);
    await rotated.close();
    const dropped = await app(prefix, [newKey]);
    const refused = await dropped.post('k2');
    expect(refused.status).toBe(500);
    expect(((await refused.json()) as { type: string }).type).toMatch(/#record-unreadable$/);
    await dropped.close();
    expect(before.runs.count + rotated.runs.count + dropped.runs.count).toBe(1);
  });
});
