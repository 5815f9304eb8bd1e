import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import { serve } from '@hono/node-server';
import compression from 'compression';
import express from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { compress } from 'hono/compress';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotency as expressIdempotency } from '../../src/http/express.js';
import { idempotency as fastifyIdempotency } from '../../src/http/fastify.js';
import { idempotency as honoIdempotency } from '../../src/http/hono.js';
import { MemoryStore } from '../../src/index.js';
import { closing, listening } from '../support/listen.js';
import { type RawResponse, rawRequest } from './support/raw-http.js';

/**
 * With the framework's compression middleware installed, every retry gets a body it can read: the layer stores
 * what the handler produced, uncompressed, and each answer is compressed (or not) for the request at hand.
 */

// Over the compression thresholds (1 KiB), under maxBodyBytes.
const report = () => ({ id: randomUUID(), rows: Array.from({ length: 200 }, (_, index) => `row-${index}`) });

interface Served {
  readonly port: number;
  runs: number;
  close(): Promise<void>;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** The app's server once it listens, closed after the test. */
async function serving(server: Server, close?: () => Promise<void>): Promise<Served> {
  const served: Served = { port: await listening(server), runs: 0, close: close ?? closing(server) };
  closers.push(served.close);
  return served;
}

const options = () => ({ store: new MemoryStore(), logger: false as const });

const apps: Record<string, () => Promise<Served>> = {};
for (const [name, create] of [
  ['express 5', express],
  ['express 4', express4 as unknown as typeof express],
] as const) {
  apps[`${name}, compression() before the layer`] = async () => {
    const app = create();
    app.use(compression());
    app.use(create.json());
    let served: Served | undefined;
    app.post('/report', expressIdempotency(options()), (_req, res) => {
      served!.runs++;
      res.status(201).json(report());
    });
    served = await serving(app.listen(0, '127.0.0.1'));
    return served;
  };
  apps[`${name}, compression() after the layer`] = async () => {
    const app = create();
    app.use(create.json());
    let served: Served | undefined;
    app.post('/report', expressIdempotency(options()), compression(), (_req, res) => {
      served!.runs++;
      res.status(201).json(report());
    });
    served = await serving(app.listen(0, '127.0.0.1'));
    return served;
  };
}
for (const order of ['before', 'after'] as const) {
  apps[`fastify, @fastify/compress registered ${order} the layer`] = async () => {
    const app = Fastify();
    if (order === 'before') await app.register(fastifyCompress);
    await app.register(fastifyIdempotency, options());
    if (order === 'after') await app.register(fastifyCompress);
    let served: Served | undefined;
    app.post('/report', { config: { idempotency: true } }, async (_request, reply) => {
      served!.runs++;
      reply.code(201);
      return report();
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    served = await serving(app.server, () => app.close());
    return served;
  };
  apps[`hono on @hono/node-server, compress() ${order} the layer`] = async () => {
    const app = new Hono();
    const idem = honoIdempotency(options());
    let served: Served | undefined;
    const handler = (c: import('hono').Context) => {
      served!.runs++;
      return c.json(report(), 201);
    };
    if (order === 'before') {
      app.use('*', compress());
      app.post('/report', idem, handler);
    } else app.post('/report', idem, compress(), handler);
    served = await serving(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
    return served;
  };
}

/** The body as the client reads it: decoded per Content-Encoding, which must be one the request accepted. */
function decoded(response: RawResponse, accepted: string): string {
  const encoding = response.headers['content-encoding'];
  if (encoding === undefined || encoding === 'identity') return response.body.toString();
  expect(accepted.split(',').map((token) => token.trim().split(';')[0])).toContain(encoding);
  if (encoding === 'gzip') return gunzipSync(response.body).toString();
  if (encoding === 'br') return brotliDecompressSync(response.body).toString();
  if (encoding === 'deflate') return inflateSync(response.body).toString();
  throw new Error(`unexpected content-encoding ${encoding}`);
}

describe('compression middleware', () => {
  for (const [name, start] of Object.entries(apps)) {
    it(`${name}: every retry is readable with its own Accept-Encoding`, async () => {
      const served = await start();
      const send = (acceptEncoding: string) =>
        rawRequest(served.port, {
          path: '/report',
          headers: {
            'idempotency-key': 'k',
            authorization: 'Bearer a',
            'content-type': 'application/json',
            'accept-encoding': acceptEncoding,
          },
          body: '{}',
        });
      const first = await send('gzip');
      expect(first.status).toBe(201);
      expect(first.headers['content-encoding']).toBe('gzip');
      const original = decoded(first, 'gzip');
      expect(JSON.parse(original).rows).toHaveLength(200);
      for (const acceptEncoding of ['identity', 'gzip', 'br', 'deflate', 'br, gzip']) {
        const retry = await send(acceptEncoding);
        expect(retry.status, acceptEncoding).toBe(201);
        expect(retry.headers['idempotent-replayed'], acceptEncoding).toBe('true');
        expect(decoded(retry, acceptEncoding), acceptEncoding).toBe(original);
      }
      expect(served.runs).toBe(1);
    });
  }
});
