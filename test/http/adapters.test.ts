import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { idempotency as expressIdempotency } from '../../src/http/express.js';
import { idempotency as fastifyIdempotency } from '../../src/http/fastify.js';
import { idempotency as honoIdempotency } from '../../src/http/hono.js';
import { idempotency as nodeIdempotency } from '../../src/http/node.js';
import { isInvalidOptionsError, MemoryStore } from '../../src/index.js';
import { OncelyModule } from '../../src/nestjs/index.js';
import { closing, listening } from '../support/listen.js';
import { socketClient, toTestResponse } from './support/harness.js';

const factories = {
  express: expressIdempotency,
  hono: honoIdempotency,
  node: nodeIdempotency,
  fastify: (options: object) => {
    // A plugin's options are checked when it registers.
    const app = Fastify();
    return app.register(fastifyIdempotency, options as never).ready();
  },
  nestjs: async (options: object) => {
    // The module's options are checked when Nest creates it. (@Module() as a call: no decorator syntax here.)
    class OptionsModule {}
    Module({ imports: [OncelyModule.forRoot(options as never)] })(OptionsModule);
    const app = await NestFactory.create(OptionsModule, { logger: false, abortOnError: false });
    await app.close();
  },
} as const;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('factories validate their options once, at construction', () => {
  const store = new MemoryStore();
  const bad: [string, Record<string, unknown>][] = [
    ['no store', {}],
    ['an unknown option', { store, requried: true }],
    ['a safe method', { store, methods: ['POST', 'GET'] }],
    ['a lower-case method', { store, methods: ['post'] }],
    ['a framing header to keep', { store, keepHeaders: ['transfer-encoding'] }],
    // A replay would hand the first client's cookies (its session) to whoever retries with the key.
    ['Set-Cookie to keep', { store, keepHeaders: ['Set-Cookie'] }],
    ['a bad header name', { store, header: 'Idempotency Key' }],
    ['a negative waitMs', { store, waitMs: -1 }],
    ['a bad fingerprint mode', { store, fingerprint: 'sha1' }],
    ['a scope that is neither a function nor global', { store, scope: 'tenant' }],
    ['a key that is not a function', { store, key: 'orderId' }],
    ['longRunning without location', { store, longRunning: {} }],
    ['a bad localCache', { store, localCache: { maxEntries: 0 } }],
    ['a lease under 10 ms', { store, leaseMs: 5 }],
    ['a logger without warn', { store, logger: { info: () => {} } }],
    ['a logger that is true', { store, logger: true }],
  ];
  for (const [adapter, create] of Object.entries(factories)) {
    it.each(bad)(`${adapter}: rejects %s`, async (_label, options) => {
      let error: unknown;
      try {
        await create(options as never);
      } catch (caught) {
        error = caught;
      }
      expect(isInvalidOptionsError(error), String(error)).toBe(true);
    });
  }

  it('warns at construction when a scope is global on purpose', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    for (const create of Object.values(factories)) await create({ store, scope: 'global' } as never);
    expect(warn).toHaveBeenCalledTimes(Object.keys(factories).length);
    expect(String(warn.mock.calls[0]?.[0])).toContain("scope 'global'");
    warn.mockClear();
    await factories.express({ store } as never);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('oncely/fastify', () => {
  it('leaves routes that did not opt in alone, and takes per-route options from config', async () => {
    const app = Fastify();
    await app.register(fastifyIdempotency, { store: new MemoryStore() });
    let runs = 0;
    app.post('/plain', async () => ({ runs: ++runs }));
    app.post('/optional', { config: { idempotency: { required: false } } }, async () => ({ runs: ++runs }));
    app.post('/required', { config: { idempotency: true } }, async () => ({ runs: ++runs }));
    await app.ready();
    expect((await app.inject({ method: 'POST', url: '/plain' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/optional' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/required' })).statusCode).toBe(400);
    const headers = { 'idempotency-key': 'same' };
    const first = await app.inject({ method: 'POST', url: '/plain', headers });
    const second = await app.inject({ method: 'POST', url: '/plain', headers });
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body).not.toBe(first.body);
    await app.close();
  });

  it('rejects bad per-route options when the route is declared', async () => {
    const app = Fastify();
    await app.register(fastifyIdempotency, { store: new MemoryStore() });
    expect(() => app.post('/x', { config: { idempotency: { methods: ['GET'] } } }, async () => ({}))).toThrow(
      /unsafe/,
    );
    // A record that expires under a running owner would let a duplicate run the effect again: refused on a
    // route as the engine refuses it for its own options, whether both are given or one is inherited.
    for (const [url, route] of [
      ['/both', { leaseMs: 60_000, retentionMs: 30_000 }],
      ['/retention', { retentionMs: 1_000 }],
      ['/lease', { leaseMs: 90_000_000 }],
    ] as const) {
      let error: unknown;
      try {
        app.post(url, { config: { idempotency: route } }, async () => ({}));
      } catch (caught) {
        error = caught;
      }
      expect(isInvalidOptionsError(error), `${url}: ${String(error)}`).toBe(true);
      expect(String(error)).toMatch(/retentionMs \(\d+\) must be at least leaseMs/);
    }
    expect(() =>
      app.post('/y', { config: { idempotency: { store: new MemoryStore() } as never } }, async () => ({})),
    ).toThrow(/unknown option "store"/);
    await app.close();
  });
});

describe('oncely/express', () => {
  it('mounted app-wide, scopes by path; mounted before any body parser, reads the body itself', async () => {
    const app = express();
    app.use(expressIdempotency({ store: new MemoryStore() }));
    let runs = 0;
    app.post('/a/:id', (req, res) => {
      res.status(201).json({ runs: ++runs, body: Buffer.isBuffer(req.body) ? req.body.toString() : null });
    });
    const server = app.listen(0, '127.0.0.1');
    const port = await listening(server);
    const request = socketClient(`http://127.0.0.1:${port}`);
    const headers = { 'idempotency-key': 'k', 'content-type': 'text/plain' };
    const one = await request({ path: '/a/1', headers, body: 'hello' });
    expect(one.json()).toEqual({ runs: 1, body: 'hello' });
    expect((await request({ path: '/a/1', headers, body: 'hello' })).headers['idempotent-replayed']).toBe(
      'true',
    );
    expect((await request({ path: '/a/1', headers, body: 'other' })).status).toBe(422);
    expect((await request({ path: '/a/2', headers, body: 'hello' })).json()).toEqual({
      runs: 2,
      body: 'hello',
    });
    await closing(server)();
  });
});

describe('oncely/express with middleware that patched the response before it', () => {
  it('captures through an instance-level end (as compression installs) and still runs it on send', async () => {
    const app = express();
    app.use(express.json());
    app.use((_req, res, next) => {
      const end = res.end;
      res.end = function patchedEnd(this: typeof res, ...args: unknown[]) {
        this.setHeader('x-patched', 'yes');
        return (end as (...rest: unknown[]) => typeof res).apply(this, args);
      } as typeof res.end;
      next();
    });
    let runs = 0;
    app.post('/p', expressIdempotency({ store: new MemoryStore() }), (_req, res) => {
      res.status(201).json({ runs: ++runs });
    });
    const server = app.listen(0, '127.0.0.1');
    const port = await listening(server);
    const request = socketClient(`http://127.0.0.1:${port}`);
    const headers = { 'idempotency-key': 'k', 'content-type': 'application/json' };
    const first = await request({ path: '/p', headers, body: '{}' });
    expect(first.status).toBe(201);
    expect(first.headers['x-patched']).toBe('yes');
    const replay = await request({ path: '/p', headers, body: '{}' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.equals(first.body)).toBe(true);
    expect(runs).toBe(1);
    await closing(server)();
  });
});

describe('oncely/hono', () => {
  it("from app.use('*') scopes by the matched route, and the handler can read the body again", async () => {
    const app = new Hono();
    app.use('*', honoIdempotency({ store: new MemoryStore() }));
    let runs = 0;
    app.post('/orders/:id', async (c) => c.json({ runs: ++runs, body: await c.req.json() }, 201));
    const send = async (path: string, body: string) => {
      const response = await app.request(path, {
        method: 'POST',
        headers: { 'idempotency-key': 'k', 'content-type': 'application/json' },
        body,
      });
      return toTestResponse(response.status, response.headers, Buffer.from(await response.arrayBuffer()));
    };
    expect((await send('/orders/1', '{"a":1}')).json()).toEqual({ runs: 1, body: { a: 1 } });
    expect((await send('/orders/1', '{"a":1}')).headers['idempotent-replayed']).toBe('true');
    // Same route template, another path: the scope is the route, so the fingerprint (path) tells them apart.
    expect((await send('/orders/2', '{"a":1}')).status).toBe(422);
  });
});
