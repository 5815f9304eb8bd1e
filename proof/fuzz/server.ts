// One app server of the fuzz phase (proof/fuzz.ts): routes on ONE framework (Express, Fastify, Hono on
// @hono/node-server, or node:http) behind oncely's adapter, on a RedisStore. Every handler answers with the
// storage key of its claim in `x-fuzz-key` (stored with the outcome, so a replay carries it too) and a fresh id in
// its body, so the checker can tell a replay from a second execution and find the request behind every record.
//
// Usage: node --import tsx proof/fuzz/server.ts '<FuzzServerConfig JSON>'. Prints {"ready":port} once listening;
// exits when stdin ends. Any uncaught error exits with code 70, which the fuzz reports as a crash.
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express, { type Request, type Response } from 'express';
import Fastify from 'fastify';
import { type Context, Hono } from 'hono';
import { Redis } from 'ioredis';
import { idempotency as expressIdempotency } from '../../src/http/express.js';
import { idempotency as fastifyIdempotency } from '../../src/http/fastify.js';
import { idempotency as honoIdempotency } from '../../src/http/hono.js';
import { idempotency as nodeIdempotency } from '../../src/http/node.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { type FuzzServerConfig, HANDLED, ID_HEADER, KEY_HEADER, MAX_BODY_BYTES } from './shared.js';

const config = JSON.parse(process.argv[2] ?? '{}') as FuzzServerConfig;
process.on('uncaughtException', (error) => {
  process.stderr.write(`uncaught exception: ${error.stack ?? error}\n`);
  process.exit(70);
});
process.on('unhandledRejection', (error) => {
  process.stderr.write(`unhandled rejection: ${(error as Error)?.stack ?? error}\n`);
  process.exit(70);
});

const client = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
client.on('error', () => {});
await new Promise((resolve) => client.once('ready', resolve));
const store = new RedisStore({ client, prefix: config.prefix });
const options = { store, methods: [...HANDLED], logger: false as const, maxBodyBytes: MAX_BODY_BYTES };

/** Tells the driver which request a claim was made for (the answer may never reach it: see proof/fuzz.ts). */
function report(key: string | undefined, id: string | string[] | undefined): void {
  if (key !== undefined && typeof id === 'string')
    process.stdout.write(`${JSON.stringify({ claim: key, id })}\n`);
}

/** What every route answers, from the request's method, path and body bytes (a digest, not the bytes). */
function answer(
  method: string,
  path: string,
  body: Uint8Array,
): { status: number; type: string; body: string } {
  const digest = createHash('sha256').update(body).digest('base64url').slice(0, 16);
  const id = randomUUID();
  const status = /^\/status\/(\d+)$/.exec(path);
  if (status)
    return { status: Number(status[1]), type: 'application/json', body: JSON.stringify({ id, digest }) };
  switch (path) {
    case '/text':
      return { status: 200, type: 'text/plain; charset=utf-8', body: `hello ${id} ${method} ${digest}` };
    case '/empty':
      return { status: 204, type: '', body: '' };
    case '/large':
      return { status: 201, type: 'application/json', body: JSON.stringify({ id, pad: 'x'.repeat(8_000) }) };
    default:
      return { status: 201, type: 'application/json', body: JSON.stringify({ id, method, digest }) };
  }
}

const ROUTES = ['/payments', '/text', '/empty', '/large', '/status/:code'];
let server: Server;

if (config.adapter === 'express') {
  const app = express();
  app.use(express.raw({ type: () => true, limit: MAX_BODY_BYTES }));
  const idem = expressIdempotency(options);
  for (const route of ROUTES) {
    app.all(route, idem, (req: Request, res: Response) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const out = answer(req.method, req.path, body);
      const key = res.locals.idempotency?.id;
      report(key, req.headers[ID_HEADER]);
      if (key !== undefined) res.setHeader(KEY_HEADER, key);
      if (out.type !== '') res.setHeader('content-type', out.type);
      res.status(out.status).end(out.body);
    });
  }
  app.use((error: { status?: number }, _req: Request, res: Response, _next: unknown) => {
    res.status(error.status !== undefined && error.status < 500 ? error.status : 500).send('error');
  });
  server = app.listen(0, '127.0.0.1');
} else if (config.adapter === 'fastify') {
  const app = Fastify({ bodyLimit: MAX_BODY_BYTES });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  await app.register(fastifyIdempotency, options);
  for (const route of ROUTES) {
    app.route({
      method: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'],
      url: route,
      config: { idempotency: true },
      handler: async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const out = answer(request.method, request.url.split('?')[0]!, body);
        const key = request.idempotency?.id;
        report(key, request.headers[ID_HEADER]);
        if (key !== undefined) reply.header(KEY_HEADER, key);
        if (out.type !== '') reply.type(out.type);
        reply.code(out.status);
        return out.status === 204 ? reply.send() : reply.send(out.body);
      },
    });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  server = app.server;
} else if (config.adapter === 'hono') {
  const app = new Hono();
  const idem = honoIdempotency(options);
  for (const route of ROUTES) {
    app.on(['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'], route, idem, async (c: Context) => {
      const body = new Uint8Array(await c.req.arrayBuffer());
      const out = answer(c.req.method, c.req.path, body);
      const key = c.var.idempotency?.id;
      report(key, c.req.header(ID_HEADER));
      const headers: Record<string, string> = key === undefined ? {} : { [KEY_HEADER]: key };
      if (out.type !== '') headers['content-type'] = out.type;
      if (out.status === 204) return c.body(null, 204, headers);
      return c.body(out.body, out.status as 200, headers);
    });
  }
  app.onError((_error, c) => c.text('error', 500));
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
} else {
  const idem = nodeIdempotency(options);
  const listener = idem(async (req: IncomingMessage, res: ServerResponse, { body, idempotency: context }) => {
    const path = (req.url ?? '/').split('?')[0]!;
    report(context?.id, req.headers[ID_HEADER]);
    if (context !== undefined) res.setHeader(KEY_HEADER, context.id);
    const known = ROUTES.some((route) => route === path) || /^\/status\/\d+$/.test(path);
    if (!known) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    const out = answer(req.method ?? 'GET', path, body ?? Buffer.alloc(0));
    if (out.type !== '') res.setHeader('content-type', out.type);
    res.statusCode = out.status;
    res.end(out.body);
  });
  server = createServer(listener).listen(0, '127.0.0.1');
}

if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
process.stdout.write(`${JSON.stringify({ ready: (server.address() as AddressInfo).port })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  server.closeAllConnections?.();
  server.close();
  client.disconnect();
  process.exit(0);
});
