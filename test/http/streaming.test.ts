import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
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
import { MemoryStore } from '../../src/index.js';
import { closing, listening } from '../support/listen.js';
import { defaultId, until } from './support/fixture.js';

/**
 * Responses the layer must not hold: a body written in pieces past `maxBodyBytes` streams to the client as it is
 * written (memory bounded by the cap, `write()` honouring backpressure), a `text/event-stream` is never held. Neither
 * is stored: the key stays claimed while it streams and is released when it ends.
 */

const CAP = 64 * 1024;
const CHUNK = 16 * 1024;
const EXPORT_BYTES = 1024 * 1024;
const FLOOD_LIMIT = 64 * 1024 * 1024;
const chunk = Buffer.alloc(CHUNK, 'x');

interface App {
  readonly port: number;
  readonly store: MemoryStore;
  /** How often each route's handler started. */
  readonly runs: Record<string, number>;
  /** Bytes the flood route produced (written, or pulled from its stream) so far, and whether write said wait. */
  readonly flood: { produced: number; refused: boolean };
  /** Opens the gate the export and event routes wait at before they end. */
  open(): void;
  close(): Promise<void>;
}

class Gate {
  #open!: () => void;
  readonly promise = new Promise<void>((resolve) => {
    this.#open = resolve;
  });
  open = () => this.#open();
}

const apps: Record<string, () => Promise<App>> = {
  'express 5': () => expressApp(express),
  'express 4': () => expressApp(express4 as unknown as typeof express),
  node: nodeApp,
  fastify: fastifyApp,
  'hono on @hono/node-server': honoApp,
};

function base(store: MemoryStore) {
  return { store, maxBodyBytes: CAP, logger: false as const };
}

/** The three routes on a Node response (Express and node share them). */
async function onNodeResponse(path: string, res: ServerResponse, app: App, gate: Gate): Promise<void> {
  app.runs[path] = (app.runs[path] ?? 0) + 1;
  if (path === '/export') {
    res.writeHead(201, { 'content-type': 'text/csv' });
    for (let sent = 0; sent < EXPORT_BYTES; sent += CHUNK) {
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
    await gate.promise;
    res.end();
  } else if (path === '/events') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\n');
    await gate.promise;
    res.end('data: two\n\n');
  } else if (path === '/flood') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    while (app.flood.produced < FLOOD_LIMIT) {
      app.flood.produced += CHUNK;
      if (!res.write(chunk)) {
        app.flood.refused = true;
        await new Promise((resolve) => res.once('close', resolve));
        return;
      }
    }
    res.end();
  }
}

async function expressApp(create: typeof express): Promise<App> {
  const store = new MemoryStore();
  const gate = new Gate();
  const app = create();
  const served = {} as App;
  app.post(['/export', '/events', '/flood'], expressIdempotency(base(store)), (req, res) => {
    void onNodeResponse(req.path, res, served, gate);
  });
  const server = app.listen(0, '127.0.0.1');
  return Object.assign(served, await describeServer(server, store, gate));
}

async function nodeApp(): Promise<App> {
  const store = new MemoryStore();
  const gate = new Gate();
  const served = {} as App;
  const server = createServer(
    nodeIdempotency(base(store))((req, res) => onNodeResponse(req.url ?? '/', res, served, gate)),
  ).listen(0, '127.0.0.1');
  return Object.assign(served, await describeServer(server, store, gate));
}

async function fastifyApp(): Promise<App> {
  const store = new MemoryStore();
  const gate = new Gate();
  const app = Fastify();
  await app.register(fastifyIdempotency, base(store));
  const served = {} as App;
  const opted = { config: { idempotency: true } } as const;
  const count = (path: string) => {
    served.runs[path] = (served.runs[path] ?? 0) + 1;
  };
  app.post('/export', opted, async (_request, reply) => {
    count('/export');
    async function* rows() {
      for (let sent = 0; sent < EXPORT_BYTES; sent += CHUNK) yield chunk;
      await gate.promise;
    }
    return reply.code(201).type('text/csv').send(Readable.from(rows()));
  });
  app.post('/events', opted, async (_request, reply) => {
    count('/events');
    async function* events() {
      yield Buffer.from('data: one\n\n');
      await gate.promise;
      yield Buffer.from('data: two\n\n');
    }
    return reply.type('text/event-stream').send(Readable.from(events()));
  });
  app.post('/flood', opted, async (_request, reply) => {
    count('/flood');
    const flood = new Readable({
      read() {
        if (served.flood.produced >= FLOOD_LIMIT) return void this.push(null);
        served.flood.produced += CHUNK;
        this.push(chunk);
      },
    });
    return reply.type('application/octet-stream').send(flood);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return Object.assign(served, await describeServer(app.server, store, gate, () => app.close()));
}

async function honoApp(): Promise<App> {
  const store = new MemoryStore();
  const gate = new Gate();
  const served = {} as App;
  const app = new Hono();
  const idem = honoIdempotency(base(store));
  const count = (path: string) => {
    served.runs[path] = (served.runs[path] ?? 0) + 1;
  };
  app.post('/export', idem, (c) => {
    count('/export');
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent >= EXPORT_BYTES) {
          await gate.promise;
          return controller.close();
        }
        sent += CHUNK;
        controller.enqueue(new Uint8Array(chunk));
      },
    });
    return c.body(body, 201, { 'content-type': 'text/csv' });
  });
  app.post('/events', idem, (c) => {
    count('/events');
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode('data: one\n\n'));
        await gate.promise;
        controller.enqueue(encoder.encode('data: two\n\n'));
        controller.close();
      },
    });
    return c.body(body, 200, { 'content-type': 'text/event-stream' });
  });
  app.post('/flood', idem, (c) => {
    count('/flood');
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (served.flood.produced >= FLOOD_LIMIT) return controller.close();
        served.flood.produced += CHUNK;
        controller.enqueue(new Uint8Array(chunk));
      },
    });
    return c.body(body, 200, { 'content-type': 'application/octet-stream' });
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  return Object.assign(served, await describeServer(server, store, gate));
}

async function describeServer(server: Server, store: MemoryStore, gate: Gate, close?: () => Promise<void>) {
  return {
    port: await listening(server),
    store,
    runs: {} as Record<string, number>,
    flood: { produced: 0, refused: false },
    open: gate.open,
    close: close ?? closing(server),
  };
}

/** A POST whose response is read as it arrives (or, with `read: false`, not at all). */
function streamingPost(port: number, path: string, key: string) {
  let received = Buffer.alloc(0);
  let response: IncomingMessage | undefined;
  let ended = false;
  const outgoing = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path,
    agent: false,
    headers: { 'idempotency-key': key, authorization: 'Bearer a', 'content-length': '0' },
  });
  outgoing.on('response', (incoming) => {
    response = incoming;
    incoming.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
    });
    incoming.on('end', () => {
      ended = true;
    });
    incoming.on('error', () => {});
  });
  outgoing.on('error', () => {});
  outgoing.end();
  return {
    get status() {
      return response?.statusCode;
    },
    get headers() {
      return response?.headers;
    },
    get received() {
      return received;
    },
    get ended() {
      return ended;
    },
    /** Stops reading: the server's socket buffers fill and its writes must wait. */
    pause: () => outgoing.on('response', (incoming) => incoming.pause()),
    destroy: () => outgoing.destroy(),
  };
}

const running: App[] = [];
afterEach(async () => {
  for (const app of running.splice(0)) {
    app.open();
    await app.close();
  }
});

async function start(name: string): Promise<App> {
  const app = await apps[name]!();
  running.push(app);
  return app;
}

for (const name of Object.keys(apps)) {
  describe(`${name}: responses past maxBodyBytes and event streams`, () => {
    it('a body written past the cap reaches the client while the handler still writes; the key is held, then released', async () => {
      const app = await start(name);
      const first = streamingPost(app.port, '/export', 'export-1');
      // More than the cap arrives before the handler ends (it waits at the gate after writing 1 MiB).
      await until(() => first.received.length > 4 * CAP, 3_000);
      expect(first.status).toBe(201);
      expect(first.ended).toBe(false);
      // A duplicate meanwhile is a conflict, not a second run.
      const duplicate = streamingPost(app.port, '/export', 'export-1');
      await until(() => duplicate.ended, 3_000);
      expect(duplicate.status).toBe(409);
      app.open();
      await until(() => first.ended, 3_000);
      expect(first.received.length).toBe(EXPORT_BYTES);
      // Not stored: released when it ended, so the retry runs the handler again (and is not a replay).
      await until(
        async () =>
          (await app.store.get(defaultId('POST', '/export', 'export-1', 'Bearer a')))?.state === 'released',
        3_000,
      );
      const retry = streamingPost(app.port, '/export', 'export-1');
      await until(() => retry.ended, 3_000);
      expect(retry.status).toBe(201);
      expect(retry.headers?.['idempotent-replayed']).toBeUndefined();
      expect(retry.received.length).toBe(EXPORT_BYTES);
      expect(app.runs['/export']).toBe(2);
    });

    it('a text/event-stream is never held: the first event arrives before the handler ends', async () => {
      const app = await start(name);
      const events = streamingPost(app.port, '/events', 'events-1');
      await until(() => events.received.toString().includes('data: one'), 3_000);
      expect(events.ended).toBe(false);
      expect(events.headers?.['content-type']).toMatch(/^text\/event-stream/);
      app.open();
      await until(() => events.ended, 3_000);
      expect(events.received.toString()).toBe('data: one\n\ndata: two\n\n');
      await until(
        async () =>
          (await app.store.get(defaultId('POST', '/events', 'events-1', 'Bearer a')))?.state === 'released',
        3_000,
      );
    });

    it('a client that does not read holds the handler back (backpressure), and memory stays bounded', async () => {
      const app = await start(name);
      const flood = streamingPost(app.port, '/flood', 'flood-1');
      flood.pause();
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Socket and stream buffers hold a few MiB at most; a capture without a cap would take all 64 MiB.
      expect(app.flood.produced).toBeLessThan(FLOOD_LIMIT / 4);
      if (name.startsWith('express') || name === 'node') expect(app.flood.refused).toBe(true);
      flood.destroy();
      // The connection closed mid-stream: the key is released, not held until the lease ends.
      await until(
        async () =>
          (await app.store.get(defaultId('POST', '/flood', 'flood-1', 'Bearer a')))?.state === 'released',
        3_000,
      );
    });
  });
}
