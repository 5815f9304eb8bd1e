import { randomUUID } from 'node:crypto';
import express, { type RequestHandler } from 'express';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency as oncelyExpress } from '../../src/http/express.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { closing, listening } from '../support/listen.js';
import { requireService, services } from '../support/services.js';

// What docs/migrating.md says the npm peers do, measured against the machine's Redis with their own Redis
// adapters (the versions in package.json). Each test prints its numbers; the guide quotes them.

const tag = `oncely-peers-${randomUUID().slice(0, 8)}`;
let redis: Redis;

beforeAll(async () => {
  await requireService('redis');
  redis = new Redis(services.redis.url);
});

afterAll(async () => {
  const keys = await redis.keys(`*${tag}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An Express app on 127.0.0.1 whose POST /payments runs `layer` then a 20 ms handler that counts its runs. */
async function serve(layer: RequestHandler, skip: (req: express.Request) => boolean = () => false) {
  const runs = new Map<string, number>();
  const app = express();
  app.use(express.json());
  app.post('/payments', layer, async (req, res) => {
    if (skip(req)) return; // express-idempotency: the handler must skip replays itself (isHit)
    const key = String(req.headers['idempotency-key']);
    runs.set(key, (runs.get(key) ?? 0) + 1);
    await sleep(20);
    res.status(201).json({ id: `pay_${randomUUID()}`, amount: req.body.amount });
  });
  const server = app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${await listening(server)}/payments`;
  const post = (key: string, authorization = 'Bearer client-a') =>
    fetch(url, {
      method: 'POST',
      headers: { 'idempotency-key': key, 'content-type': 'application/json', authorization },
      body: '{"amount":1999}',
    });
  return { runs, post, close: closing(server) };
}

/** 10 keys, 10 identical concurrent requests each: how many ran the handler more than once. */
async function storm(post: (key: string) => Promise<Response>, runs: Map<string, number>) {
  const keys = Array.from({ length: 10 }, (_, index) => `${tag}-storm-${index}-${randomUUID()}`);
  await Promise.all(keys.flatMap((key) => Array.from({ length: 10 }, () => post(key).then((r) => r.text()))));
  await sleep(100);
  const counts = keys.map((key) => runs.get(key) ?? 0);
  return { executions: counts.reduce((a, b) => a + b, 0), keysRunTwice: counts.filter((n) => n > 1).length };
}

describe('express-idempotency 1.0.6 (express-idempotency-redis-adapter)', () => {
  it('concurrent duplicates run the handler more than once (it reads, then writes, in two steps); keys are not scoped by client', async () => {
    const { idempotency, getSharedIdempotencyService } = await import('express-idempotency');
    const { default: RedisAdapter } = (await import('express-idempotency-redis-adapter')) as unknown as {
      default: new (options: {
        connectionConfig: { url: string };
      }) => {
        connect(): Promise<void>;
        disconnect(): Promise<void>;
      };
    };
    const dataAdapter = new RedisAdapter({ connectionConfig: { url: services.redis.url } });
    await dataAdapter.connect();
    const app = await serve(idempotency({ dataAdapter } as never) as unknown as RequestHandler, (req) =>
      getSharedIdempotencyService().isHit(req),
    );
    try {
      const result = await storm(app.post, app.runs);
      // Another client (another Authorization) with the same key gets the first client's response.
      const shared = `${tag}-shared`;
      const first = await (await app.post(shared, 'Bearer client-a')).text();
      await sleep(50);
      const other = await app.post(shared, 'Bearer client-b');
      const crossClient = (await other.text()) === first;
      console.log('express-idempotency', { ...result, requests: 100, crossClient });
      expect(result.keysRunTwice).toBeGreaterThan(0);
      expect(crossClient).toBe(true);
    } finally {
      await app.close();
      await dataAdapter.disconnect();
    }
  });
});

describe('@node-idempotency/core 1.0.11 (storage-adapter-redis)', () => {
  interface Core {
    onRequest(request: object): Promise<{ body?: unknown } | undefined>;
    onResponse(request: object, response: object): Promise<void>;
  }

  async function core(): Promise<{ idempotency: Core; disconnect(): Promise<void> }> {
    const { Idempotency } = (await import('@node-idempotency/core')) as unknown as {
      Idempotency: new (storage: unknown, options: object) => Core;
    };
    const { RedisStorageAdapter } = (await import('@node-idempotency/storage-adapter-redis')) as unknown as {
      RedisStorageAdapter: new (options: {
        url: string;
      }) => { connect(): Promise<void>; disconnect(): Promise<void> };
    };
    const storage = new RedisStorageAdapter({ url: services.redis.url });
    await storage.connect();
    const idempotency = new Idempotency(storage, { cacheKeyPrefix: tag });
    return { idempotency, disconnect: () => storage.disconnect() };
  }

  const request = (key: string, authorization = 'Bearer client-a') => ({
    method: 'POST',
    path: '/payments',
    headers: { 'idempotency-key': key, authorization },
    body: { amount: 1999 },
  });

  it('a request whose handler failed holds its key for cacheTTLMS: every retry is refused as in progress', async () => {
    const { idempotency, disconnect } = await core();
    try {
      let refused = 0;
      for (let index = 0; index < 10; index++) {
        const key = `${tag}-failed-${index}`;
        await idempotency.onRequest(request(key)); // the handler then throws: there is no call to let the key go
        await sleep(10);
        try {
          await idempotency.onRequest(request(key));
        } catch (error) {
          if ((error as { code?: string }).code === 'REQUEST_IN_PROGRESS') refused++;
        }
      }
      const ttlMs = await redis.pttl(`${tag}:POST:/payments:${tag}-failed-0`);
      console.log('@node-idempotency/core', {
        refusedRetriesAfterFailure: `${refused}/10`,
        heldForMs: ttlMs,
      });
      expect(refused).toBe(10);
      expect(ttlMs).toBeGreaterThan(86_000_000);
    } finally {
      await disconnect();
    }
  });

  it("the key is not scoped by the client: another client's request with the same key gets the stored response", async () => {
    const { idempotency, disconnect } = await core();
    try {
      let replayedToOther = 0;
      for (let index = 0; index < 10; index++) {
        const key = `${tag}-shared-${index}`;
        await idempotency.onRequest(request(key, 'Bearer client-a'));
        await idempotency.onResponse(request(key, 'Bearer client-a'), { body: { card: 'client-a' } });
        const other = await idempotency.onRequest(request(key, 'Bearer client-b'));
        if ((other?.body as { card?: string } | undefined)?.card === 'client-a') replayedToOther++;
      }
      console.log('@node-idempotency/core', { replayedToAnotherClient: `${replayedToOther}/10` });
      expect(replayedToOther).toBe(10);
    } finally {
      await disconnect();
    }
  });
});

describe('oncely/express on the same storm', () => {
  it('runs each key once, a retry right after the answer replays, and another client has its own record', async () => {
    const store = new RedisStore({ client: redis, prefix: tag });
    const app = await serve(oncelyExpress({ store, logger: false }));
    try {
      const result = await storm(app.post, app.runs);
      let conflicts = 0;
      for (let index = 0; index < 20; index++) {
        const key = `${tag}-retry-${index}`;
        await (await app.post(key)).text();
        if ((await app.post(key)).status === 409) conflicts++;
      }
      const shared = `${tag}-shared`;
      const first = await (await app.post(shared, 'Bearer client-a')).text();
      const crossClient = (await (await app.post(shared, 'Bearer client-b')).text()) === first;
      console.log('oncely/express', {
        ...result,
        requests: 100,
        retryConflicts: `${conflicts}/20`,
        crossClient,
      });
      expect(result).toEqual({ executions: 10, keysRunTwice: 0 });
      expect(conflicts).toBe(0);
      expect(crossClient).toBe(false);
    } finally {
      await app.close();
    }
  });
});
