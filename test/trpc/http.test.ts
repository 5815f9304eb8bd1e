/**
 * oncely/trpc behind tRPC's fetch adapter, as a client over HTTP sees it: the refusals' statuses (400, 409, 422,
 * 503), `idempotencyErrorData` in the error shape through an `errorFormatter`, a `Retry-After` header through
 * `responseMeta`; the store down (a RedisStore on a port nobody listens on: SERVICE_UNAVAILABLE, the procedure
 * never runs); and the options refused when the middleware is made.
 */
import { randomUUID } from 'node:crypto';
import { initTRPC } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { Redis } from 'ioredis';
import { isInvalidOptionsError, MemoryStore, type Store } from 'oncely';
import { RedisStore } from 'oncely/redis';
import { idempotencyErrorData, idempotent } from 'oncely/trpc';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';

interface Context {
  readonly req: Request;
}

function server(store: Store, runs: { count: number; gate?: Promise<void> }) {
  const t = initTRPC.context<Context>().create({
    errorFormatter: ({ shape, error }) => ({
      ...shape,
      data: { ...shape.data, idempotency: idempotencyErrorData(error) ?? null },
    }),
  });
  const app = t.router({
    pay: t.procedure
      .input((raw) => raw as { cents: number })
      .use(
        idempotent({
          store,
          headers: (ctx: Context) => ctx.req.headers,
          storeTimeoutMs: 500,
          breaker: false,
        }),
      )
      .mutation(async ({ input }) => {
        runs.count += 1;
        await runs.gate;
        return { id: `pay_${runs.count}`, cents: input.cents };
      }),
  });
  return (body: unknown, headers: Record<string, string>) =>
    fetchRequestHandler({
      endpoint: '/trpc',
      router: app,
      req: new Request('http://localhost/trpc/pay', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
      createContext: ({ req }) => ({ req }),
      responseMeta: ({ errors }) => {
        const retryAfter = errors.map((error) => idempotencyErrorData(error)?.retryAfter).find(Boolean);
        return retryAfter === undefined ? {} : { headers: { 'retry-after': String(retryAfter) } };
      },
    });
}

interface Answer {
  readonly error?: { readonly data: { readonly code: string; readonly idempotency: unknown } };
  readonly result?: { readonly data: unknown };
}

describe('idempotent() behind the fetch adapter', () => {
  it('answers 200 then the replay, and 409, 422, 400 with the data a client branches on', async () => {
    const runs: { count: number; gate?: Promise<void> } = { count: 0 };
    const send = server(new MemoryStore(), runs);
    const key = { 'idempotency-key': randomUUID() };
    let open!: () => void;
    runs.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const first = send({ cents: 5 }, key);
    while (runs.count === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const busy = await send({ cents: 5 }, key);
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(((await busy.json()) as Answer).error?.data).toMatchObject({
      code: 'CONFLICT',
      idempotency: { code: 'IDEMPOTENCY_CONFLICT', retryAfter: expect.any(Number) },
    });
    open();
    const done = await first;
    expect(done.status).toBe(200);
    const body = (await done.json()) as Answer;
    const replay = await send({ cents: 5 }, key);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual(body);

    const other = await send({ cents: 6 }, key);
    expect(other.status).toBe(422);
    expect(((await other.json()) as Answer).error?.data.idempotency).toEqual({
      code: 'IDEMPOTENCY_MISMATCH',
    });
    const missing = await send({ cents: 5 }, {});
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as Answer).error?.data.idempotency).toEqual({
      code: 'IDEMPOTENCY_KEY_INVALID',
    });
    expect(runs.count).toBe(1);
  });

  describe('with the store down', () => {
    const clients: Redis[] = [];
    afterAll(() => {
      for (const client of clients) client.disconnect();
    });

    it('answers 503 SERVICE_UNAVAILABLE with a Retry-After, and the procedure never runs', async () => {
      const client = new Redis({
        host: '127.0.0.1',
        port: await freePort(),
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on('error', () => {});
      clients.push(client);
      const runs = { count: 0 };
      const answer = await server(new RedisStore({ client }), runs)(
        { cents: 5 },
        { 'idempotency-key': 'k1' },
      );
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(((await answer.json()) as Answer).error?.data).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        idempotency: { code: 'IDEMPOTENCY_UNAVAILABLE', retryAfter: 1 },
      });
      expect(runs.count).toBe(0);
    });
  });
});

describe('idempotent() options', () => {
  it('refuses bad options when the middleware is made', () => {
    const store = new MemoryStore();
    const headers = (ctx: Context) => ctx.req.headers;
    const bad: unknown[] = [
      undefined,
      { store },
      { headers },
      { store, key: 'id' },
      { store, headers: 'authorization' },
      { store, headers, header: 'Idempotency Key' },
      { store, headers, required: 1 },
      { store, headers, scope: 'global' },
      { store, headers, waitMs: 1.5 },
      { store, headers, codec: { name: 'x' } },
      { store, headers, retentionMs: 5, leaseMs: 10 },
      { store, headers, keys: () => 'k' },
    ];
    for (const options of bad) {
      let thrown: unknown;
      try {
        idempotent(options as Parameters<typeof idempotent>[0]);
      } catch (error) {
        thrown = error;
      }
      expect(isInvalidOptionsError(thrown), `${JSON.stringify(options)}: ${String(thrown)}`).toBe(true);
    }
  });
});
