// One benchmark server process: a payments route on one framework, with or without an idempotency layer.
// Usage: node --import tsx bench/http/server.ts <framework> <variant> <redisPort> [client]
//   framework: express | fastify | hono | node
//   variant:   baseline | oncely | oncely-cache | oncely-memory | minimal | express-idempotency | node-idempotency
//              | oncely-otel | oncely-sdk | oncely-otel-sdk
//              (oncely-memory: the layer on a MemoryStore, to see its own cost without store round trips;
//               minimal: the two-script floor of bench/http/minimal.ts; the two peers run on express only;
//               oncely-otel: with instrumentation: otel() and only @opentelemetry/api, no SDK registered;
//               oncely-sdk / oncely-otel-sdk: the OpenTelemetry SDK registered (otel-sdk.ts), without and with
//               the instrumentation; bench/http/otel.ts compares them)
//   client:    ioredis | iovalkey | node-redis | glide: the store on a client of its own, of that library, made
//              as docs/stores/redis.md recommends (bench/http/clients.ts); without it the store shares the
//              handler's ioredis client
// Prints {"port":N} once listening; exits when stdin closes. The handler's effect is one Redis INCR per
// execution (a payment endpoint writes its effect somewhere), which also counts executions for the storm.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import type { ClientName } from '../../test/redis/support/clients.js';
import { keyOf, minimalLayer } from './minimal.js';
import { peerMiddleware } from './peers.js';

// The library as users get it: the compiled dist/ (npm run build), so the numbers are not tsx's transpiled
// output (which wraps every closure in a naming helper). ONCELY_LIB=src measures the sources instead.
const lib = process.env.ONCELY_LIB === 'src' ? '../../src' : '../../dist';
const load = <T>(path: string): Promise<T> => import(`${lib}/${path}`) as Promise<T>;
const { idempotency: expressIdempotency } =
  await load<typeof import('../../src/http/express.js')>('http/express.js');
const { idempotency: fastifyIdempotency } =
  await load<typeof import('../../src/http/fastify.js')>('http/fastify.js');
const { idempotency: honoIdempotency } = await load<typeof import('../../src/http/hono.js')>('http/hono.js');
const { idempotency: nodeIdempotency } = await load<typeof import('../../src/http/node.js')>('http/node.js');
const { MemoryStore } = await load<typeof import('../../src/stores/memory.js')>('stores/memory.js');
const { RedisStore } = await load<typeof import('../../src/stores/redis/index.js')>('stores/redis/index.js');
const { otel } = await load<typeof import('../../src/otel/index.js')>('otel/index.js');

const [framework = 'express', variant = 'baseline', redisPort = '6379', storeClient] = process.argv.slice(2);
if (variant === 'oncely-sdk' || variant === 'oncely-otel-sdk') (await import('./otel-sdk.js')).registerSdk();
// Each layer on the client options its docs recommend: the RedisStore page's (no offline queue, no resend after a
// reconnect; the store batches a turn's calls itself), and for the minimal layer ioredis' auto-pipelining, which
// batches the commands of concurrent requests into one socket write (syscalls dominate the cost per round trip on
// small machines). AUTOPIPELINE=1 turns it on for every variant.
const redis = new Redis({
  port: Number(redisPort),
  host: '127.0.0.1',
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  enableAutoPipelining: variant === 'minimal' || process.env.AUTOPIPELINE === '1',
});
await new Promise((resolve) => redis.once('ready', resolve));

/**
 * The store's client. With a `client` argument, a connection of its own of that library, so the handler's effect
 * write stays on the ioredis client above in every row and only the store's client changes; GLIDE with the second
 * client its page recommends for `waitFor` (a GLIDE client cannot be duplicated: without it, waiters poll).
 */
async function storeClientOptions() {
  if (storeClient === undefined) return { client: redis };
  const { connectClient, glideSubscriber } = await import('../../test/redis/support/clients.js');
  const port = Number(redisPort);
  const { client } = await connectClient(storeClient as ClientName, port);
  return storeClient === 'glide' ? { client, subscriber: (await glideSubscriber(port)).client } : { client };
}

// Records expire on their own well after a benchmark run; the runner's Redis is disposable anyway.
const options = {
  store:
    variant === 'oncely-memory'
      ? new MemoryStore()
      : new RedisStore({ ...(await storeClientOptions()), prefix: 'bench' }),
  retentionMs: 600_000,
  ...(variant === 'oncely-cache' ? { localCache: { maxEntries: 20_000, ttlMs: 60_000 } } : {}),
  ...(variant.startsWith('oncely-otel') ? { instrumentation: otel() } : {}),
};
const withOncely = variant.startsWith('oncely');
const minimal = variant === 'minimal' ? minimalLayer(redis) : undefined;
let sequence = 0;

/** The business logic: one write to Redis, then the payment as JSON. */
async function charge(key: string | undefined, body: unknown): Promise<string> {
  await redis.incr(`effect:${key ?? 'none'}`);
  const { amount, currency } = body as { amount: number; currency: string };
  return JSON.stringify({ id: `pay_${process.pid}_${++sequence}`, amount, currency, status: 'succeeded' });
}
const keyHeader = (headers: IncomingMessage['headers']) => headers['idempotency-key'] as string | undefined;

let port: number;
if (framework === 'express') {
  const app = express();
  app.use(express.json());
  const handler = async (req: express.Request, res: express.Response) => {
    if (variant === 'express-idempotency' && peerMiddleware.isHit(req)) return;
    res
      .status(201)
      .type('application/json')
      .send(await charge(keyHeader(req.headers), req.body));
  };
  if (withOncely) app.post('/payments', expressIdempotency(options), handler);
  else if (minimal !== undefined) {
    app.post(
      '/payments',
      async (req: express.Request, res: express.Response, next: express.NextFunction) => {
        const key = keyOf(req);
        const start = await minimal.start(key, req.body);
        if (start.kind === 'replay')
          return void res
            .status(201)
            .type('application/json')
            .set('idempotent-replayed', 'true')
            .send(start.body);
        if (start.kind === 'refuse') return void res.status(start.status).end();
        minimal.holdEnd(res, key!);
        next();
      },
      handler,
    );
  } else if (variant === 'express-idempotency' || variant === 'node-idempotency') {
    app.post('/payments', await peerMiddleware.create(variant, Number(redisPort)), handler);
  } else app.post('/payments', handler);
  port = await listen(createServer(app));
} else if (framework === 'fastify') {
  const app = Fastify();
  if (withOncely) await app.register(fastifyIdempotency, options);
  const ran = new WeakSet<object>();
  const minimalHooks =
    minimal === undefined
      ? {}
      : {
          preHandler: async (
            request: import('fastify').FastifyRequest,
            reply: import('fastify').FastifyReply,
          ) => {
            const start = await minimal.start(keyHeader(request.headers), request.body);
            if (start.kind === 'run') return void ran.add(request);
            if (start.kind === 'refuse') return reply.code(start.status).send();
            return reply
              .code(201)
              .type('application/json')
              .header('idempotent-replayed', 'true')
              .send(start.body);
          },
          onSend: async (request: import('fastify').FastifyRequest, _reply: unknown, payload: unknown) => {
            if (ran.has(request)) await minimal.complete(keyHeader(request.headers)!, String(payload));
            return payload;
          },
        };
  app.post('/payments', { config: { idempotency: withOncely }, ...minimalHooks }, async (request, reply) => {
    reply.code(201).type('application/json');
    return charge(keyHeader(request.headers), request.body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
} else if (framework === 'hono') {
  const app = new Hono();
  const handler = async (c: import('hono').Context) =>
    c.body(await charge(c.req.header('idempotency-key'), await c.req.json()), 201, {
      'content-type': 'application/json',
    });
  if (withOncely) app.post('/payments', honoIdempotency(options), handler);
  else if (minimal !== undefined) {
    app.post(
      '/payments',
      async (c, next) => {
        const key = c.req.header('idempotency-key');
        const start = await minimal.start(key, await c.req.json());
        if (start.kind === 'replay')
          return c.body(start.body, 201, {
            'content-type': 'application/json',
            'idempotent-replayed': 'true',
          });
        if (start.kind === 'refuse') return c.body(null, start.status as 409);
        await next();
        await minimal.complete(key!, heldText(c.res) ?? (await c.res.clone().text()));
      },
      handler,
    );
  } else app.post('/payments', handler);
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
} else {
  const respond = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const payment = await charge(keyHeader(req.headers), JSON.parse(body.toString('utf8')));
    res.writeHead(201, { 'content-type': 'application/json' }).end(payment);
  };
  const withMinimal = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    if (minimal === undefined) return respond(req, res, body);
    const key = keyOf(req);
    const start = await minimal.start(key, JSON.parse(body.toString('utf8')));
    if (start.kind === 'replay')
      return void res
        .writeHead(201, { 'content-type': 'application/json', 'idempotent-replayed': 'true' })
        .end(start.body);
    if (start.kind === 'refuse') return void res.writeHead(start.status).end();
    minimal.holdEnd(res, key!);
    return respond(req, res, body);
  };
  const listener = withOncely
    ? nodeIdempotency(options)((req, res, { body }) => respond(req, res, body!))
    : (req: IncomingMessage, res: ServerResponse) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => void withMinimal(req, res, Buffer.concat(chunks)));
      };
  port = await listen(createServer(listener));
}

/**
 * The body of a Response @hono/node-server made from a string, read from its cache without a stream (what
 * oncely/hono does too), so the minimal layer is not charged for cloning the response.
 */
function heldText(response: Response): string | undefined {
  for (const symbol of Object.getOwnPropertySymbols(response)) {
    if (symbol.description !== 'cache') continue;
    const body = (response as unknown as Record<symbol, unknown[] | undefined>)[symbol]?.[1];
    return typeof body === 'string' ? body : undefined;
  }
  return undefined;
}

async function listen(server: import('node:http').Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

process.stdout.write(`${JSON.stringify({ port })}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
