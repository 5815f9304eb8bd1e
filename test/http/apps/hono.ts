import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { cors } from 'hono/cors';
import { idempotency } from '../../../src/http/hono.js';
import { type AdapterHarness, overSocket, toTestResponse } from '../support/harness.js';
import { binaryBody, LARGE_PAD } from '../support/routes.js';

const keyOf = (c: Context) => c.var.idempotency?.key;

/** The suite's app on Hono, exercised in-process with `app.request()`, or over @hono/node-server. */
export const honoHarness: AdapterHarness = honoOn(false);
export const honoNodeServerHarness: AdapterHarness = honoOn(true);

function honoOn(overNodeServer: boolean): AdapterHarness {
  return {
    name: overNodeServer ? 'hono on @hono/node-server' : 'hono',
    rawBytes: true,
    async build({ options, counters, gates }) {
      const app = new Hono();
      // Per-request headers of middleware before the layer: Hono's own cors() (on c.res) and a request id and
      // cache policy through c.header().
      app.use('*', cors({ origin: (origin) => origin }));
      app.use('*', async (c, next) => {
        c.header('x-request-id', randomUUID());
        c.header('cache-control', 'no-store');
        await next();
      });
      const idem = idempotency(options as never);

      app.post('/payments', idem, async (c) => {
        const n = counters.bump('payments', keyOf(c));
        const text = await c.req.text();
        c.header('x-handler', 'yes');
        c.header('cache-control', 'private');
        c.header('set-cookie', 'session=abc; Path=/');
        c.header('set-cookie', 'theme=dark; Path=/', { append: true });
        return c.json(
          {
            id: randomUUID(),
            n,
            body: c.req.header('content-type')?.includes('json') && text !== '' ? JSON.parse(text) : text,
          },
          201,
        );
      });
      app.post('/text', idem, (c) => c.text(`hello ${counters.bump('text', keyOf(c))}`));
      app.post('/binary', idem, (c) => {
        const bytes = binaryBody(counters.bump('binary', keyOf(c)));
        return c.body(new Uint8Array(bytes), 200, { 'content-type': 'application/octet-stream' });
      });
      app.post('/stream', idem, (c) => {
        const n = counters.bump('stream', keyOf(c));
        const encoder = new TextEncoder();
        const stream = new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(encoder.encode('part1-'));
            await new Promise((resolve) => setTimeout(resolve, 5));
            controller.enqueue(encoder.encode('part2-'));
            controller.enqueue(encoder.encode(String(n)));
            controller.close();
          },
        });
        return c.body(stream, 200, { 'content-type': 'text/plain' });
      });
      app.post('/empty', idem, (c) => {
        counters.bump('empty', keyOf(c));
        return c.body(null, 204);
      });
      app.post('/status/:code', idem, (c) => {
        const n = counters.bump('status', keyOf(c));
        return c.json({ n }, Number(c.req.param('code')) as 200);
      });
      app.post('/fail-once', idem, (c) => {
        const n = counters.bump('fail-once', keyOf(c));
        return c.json({ n }, n === 1 ? 500 : 201);
      });
      app.post('/throw', idem, (c) => {
        const n = counters.bump('throw', keyOf(c));
        if (n === 1) throw new Error('boom');
        return c.json({ n }, 201);
      });
      app.post('/skip', idem, (c) => {
        const n = counters.bump('skip', keyOf(c));
        c.var.idempotency?.skipStorage();
        return c.json({ n }, 201);
      });
      app.post('/large', idem, (c) => c.json({ n: counters.bump('large', keyOf(c)), pad: LARGE_PAD }, 201));
      app.post('/slow', idem, async (c) => {
        const key = keyOf(c)!;
        const n = counters.bump('slow', key);
        gates.arrived.add(key);
        await gates.wait(key);
        return c.json({ n, id: randomUUID() }, 201);
      });
      app.post('/defer', idem, (c) => {
        const context = c.var.idempotency;
        const n = counters.bump('defer', context.key);
        return context.defer(async () => {
          await gates.wait(context.key);
          return { status: 201, json: { n } };
        });
      });
      app.get('/operations/:id', (c) => idem.status(c));
      app.get('/payments', (c) => c.json({ n: counters.bump('get-payments', undefined) }));
      app.onError((_error, c) => c.text('Internal Server Error', 500));

      if (overNodeServer) {
        // The same app behind @hono/node-server over a real socket: its lightweight Response takes the
        // middleware's fast path (the body read from memory, not from a stream).
        return overSocket(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
      }
      return {
        async request({ method = 'POST', path, headers = {}, body }) {
          const response = await app.request(path, {
            method,
            headers,
            ...(body === undefined ? {} : { body: body as BodyInit }),
          });
          return toTestResponse(response.status, response.headers, Buffer.from(await response.arrayBuffer()));
        },
        close: async () => {},
      };
    },
  };
}
