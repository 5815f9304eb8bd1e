// A storm server process: the same payment route on all four adapters (one port each), sharing the machine's
// Redis through RedisStore. Prints {"ports":{…}} once listening; exits when its stdin closes.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { idempotency as expressIdempotency } from '../../../src/http/express.js';
import { idempotency as fastifyIdempotency } from '../../../src/http/fastify.js';
import { idempotency as honoIdempotency } from '../../../src/http/hono.js';
import { idempotency as nodeIdempotency } from '../../../src/http/node.js';
import { RedisStore } from '../../../src/stores/redis/index.js';

const [prefix = 'oncely-http-storm', handlerMs = '100'] = process.argv.slice(2);
const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const store = new RedisStore({ client, prefix });
const waiting = { store, waitMs: 10_000 };
const conflicting = { store };

/** The effect: counted in Redis so executions add up across server processes. */
async function charge(adapter: string, route: string, key: string): Promise<string> {
  await client.incr(`${prefix}:executions:${adapter}:${route}:${key}`);
  await new Promise((resolve) => setTimeout(resolve, Number(handlerMs)));
  return JSON.stringify({ id: randomUUID(), key });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const app = express();
app.use(express.json());
for (const [route, options] of [
  ['/wait', waiting],
  ['/conflict', conflicting],
] as const) {
  app.post(route, expressIdempotency(options), async (_req, res) => {
    const body = await charge('express', route, res.locals.idempotency!.key);
    res.status(201).type('application/json').send(body);
  });
}
const expressPort = await listen(createServer(app));

const fastify = Fastify();
await fastify.register(fastifyIdempotency, conflicting);
for (const [route, config] of [
  ['/wait', { waitMs: 10_000 }],
  ['/conflict', true],
] as const) {
  fastify.post(route, { config: { idempotency: config } }, async (request, reply) => {
    const body = await charge('fastify', route, request.idempotency!.key);
    return reply.code(201).type('application/json').send(body);
  });
}
await fastify.listen({ port: 0, host: '127.0.0.1' });
const fastifyPort = (fastify.server.address() as AddressInfo).port;

const hono = new Hono();
for (const [route, options] of [
  ['/wait', waiting],
  ['/conflict', conflicting],
] as const) {
  hono.post(route, honoIdempotency(options), async (c) =>
    c.body(await charge('hono', route, c.var.idempotency.key), 201, { 'content-type': 'application/json' }),
  );
}
const honoServer = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' });
await new Promise((resolve) => honoServer.once('listening', resolve));
const honoPort = (honoServer.address() as AddressInfo).port;

const nodeRoutes = new Map<string, ReturnType<ReturnType<typeof nodeIdempotency>>>(
  (
    [
      ['/wait', waiting],
      ['/conflict', conflicting],
    ] as const
  ).map(([route, options]) => [
    route,
    nodeIdempotency(options)(async (_req, response, { idempotency }) => {
      const body = await charge('node', route, idempotency!.key);
      response.writeHead(201, { 'content-type': 'application/json' }).end(body);
    }),
  ]),
);
const nodePort = await listen(
  createServer((req, res) => {
    const listener = nodeRoutes.get(req.url ?? '/');
    if (listener === undefined) return void res.writeHead(404).end();
    listener(req, res);
  }),
);

process.stdout.write(
  `${JSON.stringify({ ports: { express: expressPort, fastify: fastifyPort, hono: honoPort, node: nodePort } })}\n`,
);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
