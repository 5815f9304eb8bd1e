import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotency as expressIdempotency } from '../../src/http/express.js';
import { idempotency as fastifyIdempotency } from '../../src/http/fastify.js';
import { idempotency as honoIdempotency } from '../../src/http/hono.js';
import { idempotency as nodeIdempotency } from '../../src/http/node.js';
import { ERRORS_DOC_URL } from '../../src/http/problem.js';
import { MemoryStore } from '../../src/index.js';
import { rawRequest } from './support/raw-http.js';

/** A server on a loopback port; `runs` counts handler runs. */
interface Served {
  readonly port: number;
  readonly runs: () => number;
  close(): Promise<void>;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function listening(server: Server): Promise<number> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  return (server.address() as AddressInfo).port;
}

function closing(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}

/** POST /payments answers 201 JSON on every adapter, behind the layer. */
const servers: Record<string, () => Promise<Served>> = {
  'express 5': () => expressServer(express as never),
  'express 4': () => expressServer(express4 as never),
  async node() {
    let runs = 0;
    const idem = nodeIdempotency({ store: new MemoryStore() });
    const { createServer } = await import('node:http');
    const server = createServer(
      idem((_req, res) => {
        runs++;
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
      }),
    ).listen(0, '127.0.0.1');
    return { port: await listening(server), runs: () => runs, close: closing(server) };
  },
  async 'hono on @hono/node-server'() {
    let runs = 0;
    const app = new Hono();
    app.post('/payments', honoIdempotency({ store: new MemoryStore() }), (c) => {
      runs++;
      return c.json({ ok: true }, 201);
    });
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    return { port: await listening(server), runs: () => runs, close: closing(server) };
  },
  async fastify() {
    let runs = 0;
    const app = Fastify();
    await app.register(fastifyIdempotency, { store: new MemoryStore() });
    app.post('/payments', { config: { idempotency: true } }, async (_request, reply) => {
      runs++;
      reply.code(201);
      return { ok: true };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port, runs: () => runs, close: () => app.close() };
  },
};

async function expressServer(create: typeof express): Promise<Served> {
  let runs = 0;
  const app = create();
  app.use(create.json());
  app.post('/payments', expressIdempotency({ store: new MemoryStore() }), (_req, res) => {
    runs++;
    res.status(201).json({ ok: true });
  });
  const server = app.listen(0, '127.0.0.1');
  return { port: await listening(server), runs: () => runs, close: closing(server) };
}

async function start(name: string): Promise<Served> {
  const served = await servers[name]!();
  closers.push(served.close);
  return served;
}

describe('two Idempotency-Key header lines', () => {
  for (const name of Object.keys(servers)) {
    it(`${name}: are refused with 400 key-malformed (reason "multiple"), even when each line alone is a key`, async () => {
      const { port, runs } = await start(name);
      for (const lines of [
        ['a', 'b'],
        ['same', 'same'],
        ['"a"', '"b"'],
      ]) {
        const answer = await rawRequest(port, {
          path: '/payments',
          headers: { 'content-type': 'application/json', 'idempotency-key': lines },
          body: '{}',
        });
        expect(answer.status, answer.body.toString()).toBe(400);
        expect(answer.headers['content-type']).toBe('application/problem+json');
        const problem = JSON.parse(answer.body.toString());
        expect(problem.type).toBe(`${ERRORS_DOC_URL}#key-malformed`);
        expect(problem.reason).toBe('multiple');
      }
      expect(runs()).toBe(0);
      // One line with a quoted comma is one key.
      const one = await rawRequest(port, {
        path: '/payments',
        headers: { 'content-type': 'application/json', 'idempotency-key': '"a, b"' },
        body: '{}',
      });
      expect(one.status).toBe(201);
      expect(runs()).toBe(1);
    });
  }
});
