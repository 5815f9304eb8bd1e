/**
 * @module `oncely/fetch` in a real Next.js 16 app: the App Router app in nextjs/next-app (route handlers behind
 * `withIdempotency`, importing `oncely/fetch` by the package's own name, which resolves through package.json's
 * exports to the built dist/), built once with `next build` and served by one `next start`, runs the HTTP semantics
 * table (test/http/support/semantics.ts) on RedisStore and on PostgresStore over real sockets; and the route file
 * as docs/adapters/nextjs.md writes one (module-scope store, a route template) answers as the page says.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultId, expectProblem } from '../http/support/fixture.js';
import { toTestResponse } from '../http/support/harness.js';
import { runHttpSemantics } from '../http/support/semantics.js';
import { requireService, services } from '../support/services.js';
import { type CallbackServer, nextHarness, startCallbackServer } from './nextjs/harness.js';
import { type BuiltApp, buildNextApp, type NextServer, startNextServer } from './nextjs/next-server.js';
import { builtStores, nextPostgresStore, nextRedisStore } from './nextjs/stores.js';

const ordersPrefix = `oncely-next-orders-${randomUUID().slice(0, 8)}`;
let built: BuiltApp | undefined;
let server: NextServer | undefined;
let callbacks: CallbackServer | undefined;

beforeAll(async () => {
  // The app imports the package by its name, as users do: that is dist/, which npm test builds first.
  if (!existsSync(fileURLToPath(new URL('../../dist/http/fetch.js', import.meta.url))))
    throw new Error('dist/ is not built: the Next.js app imports oncely/fetch from it (npm run build)');
  await Promise.all([requireService('redis'), requireService('postgres')]);
  callbacks = await startCallbackServer();
  built = await buildNextApp();
  server = await startNextServer(built.dir, {
    REDIS_URL: services.redis.url,
    DATABASE_URL: services.postgres.url,
    ONCELY_HARNESS_URL: callbacks.url,
    ONCELY_ORDERS_PREFIX: ordersPrefix,
  });
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await callbacks?.close();
  await built?.remove();
});

const harness = nextHarness(
  () => server!.baseUrl,
  () => callbacks!,
);

runHttpSemantics(harness, nextRedisStore());
runHttpSemantics(harness, nextPostgresStore());

describe('the route file as docs/adapters/nextjs.md writes it (app/orders/[id]/pay)', () => {
  let client: Redis;
  beforeAll(() => {
    client = new Redis(services.redis.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    const keys = await client.keys(`${ordersPrefix}*`);
    if (keys.length > 0) await client.del(...keys);
    await client.quit();
  });

  it("replays a retry with the segment Next.js passed; the template names the scope, so another order's path under the same key is refused (422)", async () => {
    const key = randomUUID();
    const pay = async (order: string) => {
      const response = await fetch(`${server!.baseUrl}/orders/${order}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: '{"amount":100}',
      });
      return toTestResponse(response.status, response.headers, Buffer.from(await response.arrayBuffer()));
    };
    const first = await pay('a');
    expect(first.status).toBe(201);
    expect(first.json()).toEqual({ order: 'a', attempt: 1 });
    const replay = await pay('a');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.equals(first.body)).toBe(true);
    // Without the template each order's path would be a scope of its own, and this a first run (201).
    expectProblem(await pay('b'), 'key-reused', 422);
    const store = new (await builtStores()).redis.RedisStore({ client, prefix: ordersPrefix });
    expect((await store.get(defaultId('POST', '/orders/[id]/pay', key)))?.state).toBe('completed');
  });
});
