/**
 * @module The app the Bun and Deno servers serve (bun-server.ts, deno-server.ts): web-standard handlers behind
 * `withIdempotency`, on RedisStore with ioredis, run by the runtime from the TypeScript sources. Executions are
 * counted in Redis (`<prefix>:runs:<key>`), so the test reads them from outside the server.
 *
 * | route | answer |
 * | --- | --- |
 * | POST /payments | 201 JSON { id (random), n, amount, token }, x-peer: the client's address as the runtime's own second argument tells it |
 * | POST /slow | counts, then waits until the test sets `<prefix>:gate:<key>`; 201 JSON { id, n } |
 * | GET /health | 200 |
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { idempotencyOf, withIdempotency } from '../../../src/http/fetch.js';
import { RedisStore } from '../../../src/stores/redis/index.js';

/** How the runtime tells a handler the client's address, from the argument it passes after the request. */
export type PeerOf = (request: Request, runtimeArgument: unknown) => string | undefined;

export function runtimeApp(
  peerOf: PeerOf,
): (request: Request, runtimeArgument: unknown) => Promise<Response> {
  const url = readEnv('REDIS_URL');
  const prefix = readEnv('ONCELY_PREFIX');
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', (error) => console.error('redis:', error.message));
  const store = new RedisStore({ client, prefix });
  const options = { store, logger: false } as const;

  const payments = withIdempotency(async (request: Request, runtimeArgument: unknown) => {
    const context = idempotencyOf(request)!;
    const body = (await request.json()) as { amount: number; delayMs?: number };
    const n = await client.incr(`${prefix}:runs:${context.key}`);
    // A storm's first runs overlap their duplicates for a while.
    if (body.delayMs !== undefined) await sleep(body.delayMs);
    const headers = { 'x-peer': peerOf(request, runtimeArgument) ?? 'unknown' };
    return Response.json(
      { id: randomUUID(), n, amount: body.amount, token: context.token },
      { status: 201, headers },
    );
  }, options);

  const slow = withIdempotency(async (request: Request) => {
    const key = idempotencyOf(request)!.key;
    const n = await client.incr(`${prefix}:runs:${key}`);
    while ((await client.get(`${prefix}:gate:${key}`)) === null) await sleep(10);
    return Response.json({ id: randomUUID(), n }, { status: 201 });
  }, options);

  return async (request, runtimeArgument) => {
    const path = new URL(request.url).pathname;
    if (path === '/payments') return payments(request, runtimeArgument);
    if (path === '/slow') return slow(request);
    if (path === '/health') return new Response('ok');
    return new Response('not found', { status: 404 });
  };
}

function readEnv(name: string): string {
  const value = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
