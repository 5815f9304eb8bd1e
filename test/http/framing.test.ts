import type { Agent, Server } from 'node:http';
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
import { closing, listening } from '../support/listen.js';
import { oneConnection, type RawResponse, rawRequest } from './support/raw-http.js';

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

/** The server's port and a keep-alive agent of one connection to it, both closed after the test. */
async function overOneConnection(server: Server): Promise<{ port: number; agent: Agent }> {
  closers.push(closing(server));
  const port = await listening(server);
  const agent = oneConnection();
  closers.push(async () => agent.destroy());
  return { port, agent };
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

/**
 * A handler that writes part of its body, then throws: without the layer Express has sent the headers and the
 * part, cannot answer the error, and closes the connection. With the layer nothing was sent yet; the error page
 * after the part made a response whose Content-Length did not match its body, and a keep-alive client read the
 * rest as the next response (HPE_INVALID_CONSTANT). Now the layer does what Express does, and releases the key.
 */
describe('a partial write, then an error (Express 4 and 5)', () => {
  for (const [name, create] of [
    ['express 5', express],
    ['express 4', express4],
  ] as const) {
    for (const errorHandler of ['the default error handler', 'an error handler that sends a page']) {
      it(`${name}, ${errorHandler}: the connection closes as without the layer, the key is released, the next request on a keep-alive agent is framed right`, async () => {
        const outcome = async (withLayer: boolean) => {
          let runs = 0;
          const app = (create as typeof express)();
          app.use((create as typeof express).json());
          const layer = withLayer ? [expressIdempotency({ store: new MemoryStore(), logger: false })] : [];
          app.post('/partial', ...layer, (_req, res) => {
            runs++;
            res.status(201).setHeader('content-type', 'text/plain');
            res.write('partial-');
            if (runs === 1) throw new Error('boom after a partial write');
            res.end('done');
          });
          app.post('/other', (_req, res) => {
            res.json({ other: true });
          });
          if (errorHandler !== 'the default error handler') {
            app.use((_error: unknown, _req: express.Request, res: express.Response, _next: unknown) => {
              res.status(500).send('error');
            });
          }
          const server = app.listen(0, '127.0.0.1');
          const { port, agent } = await overOneConnection(server);
          const send = (path: string) =>
            rawRequest(port, {
              path,
              agent,
              headers: {
                'content-type': 'application/json',
                'idempotency-key': 'k',
                authorization: 'Bearer a',
              },
              body: '{}',
            }).then(
              (response): RawResponse | string => response,
              (error: { code?: string; message: string }) => `${error.code ?? ''} ${error.message}`,
            );
          const first = await send('/partial');
          const second = await send('/partial');
          const third = await send('/other');
          return { first, second, third, runs };
        };
        const bare = await outcome(false);
        const layered = await outcome(true);
        // Without the layer: the first request fails (the connection is closed mid-response).
        expect(typeof bare.first, JSON.stringify(bare.first)).toBe('string');
        // With the layer: the same, and never a parse error of a mis-framed response.
        expect(typeof layered.first, JSON.stringify(layered.first)).toBe('string');
        expect(layered.first as string).not.toMatch(/HPE_/);
        // The key was released: the retry runs the handler again and gets its whole, well-framed answer.
        const second = layered.second as RawResponse;
        expect(typeof layered.second, JSON.stringify(layered.second)).toBe('object');
        expect(second.status).toBe(201);
        expect(second.body.toString()).toBe('partial-done');
        expect(second.headers['idempotent-replayed']).toBeUndefined();
        expect(layered.runs).toBe(2);
        const third = layered.third as RawResponse;
        expect(typeof layered.third, JSON.stringify(layered.third)).toBe('object');
        expect(third.status).toBe(200);
        expect(JSON.parse(third.body.toString())).toEqual({ other: true });
      });
    }
  }
});

describe('a partial write, then other headers (node)', () => {
  it('closes the connection and releases the key; a status set after a write is ignored, as Node ignores it', async () => {
    let runs = 0;
    const idem = nodeIdempotency({ store: new MemoryStore(), logger: false });
    const { createServer } = await import('node:http');
    const server = createServer(
      idem((req, res) => {
        runs++;
        res.setHeader('x-list', ['a']);
        res.writeHead(201, { 'content-type': 'text/plain' });
        res.write('partial-');
        if (req.url === '/header' && runs === 1) res.setHeader('x-late', 'yes');
        // appendHeader extends the header's array in place: still a change after the headers went out.
        if (req.url === '/append' && runs === 3) res.appendHeader('x-list', 'b');
        if (req.url === '/status') res.statusCode = 500;
        res.end('done');
      }),
    ).listen(0, '127.0.0.1');
    const { port, agent } = await overOneConnection(server);
    const send = (path: string) =>
      rawRequest(port, {
        path,
        agent,
        headers: { 'idempotency-key': 'k', authorization: 'Bearer a', 'content-type': 'text/plain' },
        body: 'x',
      });
    await expect(send('/header')).rejects.toMatchObject({ message: expect.not.stringMatching(/HPE_/) });
    const retry = await send('/header');
    expect([retry.status, retry.body.toString()]).toEqual([201, 'partial-done']);
    expect(runs).toBe(2);
    await expect(send('/append')).rejects.toMatchObject({ message: expect.not.stringMatching(/HPE_/) });
    expect(runs).toBe(3);
    const status = await send('/status');
    expect([status.status, status.body.toString()]).toEqual([201, 'partial-done']);
    const replay = await send('/status');
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([201, 'true']);
  });
});
