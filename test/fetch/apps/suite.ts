/**
 * @module The HTTP suite's app (test/http/support/routes.ts) as web-standard handlers behind `oncely/fetch`: each
 * route a `(request) => Response`, wrapped (`idem.wrap`, as `withIdempotency` does) or behind the middleware in a
 * handler chain; in front of both, a middleware of the user's that adds this request's CORS and request id.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { idempotency, idempotencyOf } from '../../../src/http/fetch.js';
import { type AdapterHarness, overSocket, toTestResponse } from '../../http/support/harness.js';
import { binaryBody, type Counters, type Gates, LARGE_PAD } from '../../http/support/routes.js';

type Handler = (request: Request) => Response | Promise<Response>;
type Mode = 'wrap' | 'middleware' | 'middleware on @hono/node-server';

const keyOf = (request: Request) => idempotencyOf(request)?.key;

export const wrapHarness: AdapterHarness = fetchHarness('wrap');
export const middlewareHarness: AdapterHarness = fetchHarness('middleware');
export const nodeServerHarness: AdapterHarness = fetchHarness('middleware on @hono/node-server');

function fetchHarness(mode: Mode): AdapterHarness {
  return {
    name: `fetch (${mode})`,
    rawBytes: true,
    async build({ options, counters, gates }) {
      const idem = idempotency(options as never);
      const guarded = (handler: Handler): Handler => (mode === 'wrap' ? idem.wrap(handler) : handler);
      const routes = suiteRoutes(counters, gates, guarded);
      const router: Handler = (request) => {
        const path = new URL(request.url).pathname;
        if (request.method === 'GET' && path.startsWith('/operations/')) return idem.status(request);
        const name = path.startsWith('/status/') ? '/status/:code' : path;
        const route = routes.get(`${request.method} ${name}`);
        return route ? route(request) : new Response('not found', { status: 404 });
      };
      const layered: Handler = mode === 'wrap' ? router : (request) => idem(request, router);
      const app: Handler = async (request) => {
        let response: Response;
        try {
          response = await layered(request);
        } catch {
          // What a runtime does with a handler that throws.
          return new Response('Internal Server Error', { status: 500 });
        }
        return withRequestHeaders(request, response);
      };
      if (mode === 'middleware on @hono/node-server') {
        return overSocket(serve({ fetch: app, port: 0, hostname: '127.0.0.1' }) as Server);
      }
      return {
        async request({ method = 'POST', path, headers = {}, body }) {
          const request = new Request(`http://localhost${path}`, {
            method,
            headers,
            ...(body === undefined ? {} : { body: body as BodyInit }),
          });
          const response = await app(request);
          return toTestResponse(response.status, response.headers, Buffer.from(await response.arrayBuffer()));
        },
        close: async () => {},
      };
    },
  };
}

/** The user's middleware before the layer: this request's CORS and request id, a cache policy the handler may set. */
function withRequestHeaders(request: Request, response: Response): Response {
  const origin = request.headers.get('origin');
  if (origin !== null) response.headers.set('access-control-allow-origin', origin);
  response.headers.set('x-request-id', randomUUID());
  if (!response.headers.has('cache-control')) response.headers.set('cache-control', 'no-store');
  return response;
}

function suiteRoutes(counters: Counters, gates: Gates, guarded: (handler: Handler) => Handler) {
  const json = (value: unknown, status: number) => Response.json(value, { status });
  const routes = new Map<string, Handler>();
  const post = (path: string, handler: Handler) => routes.set(`POST ${path}`, guarded(handler));
  post('/payments', async (request) => {
    const n = counters.bump('payments', keyOf(request));
    const text = await request.text();
    const headers = new Headers({ 'x-handler': 'yes', 'cache-control': 'private' });
    headers.append('set-cookie', 'session=abc; Path=/');
    headers.append('set-cookie', 'theme=dark; Path=/');
    headers.set('content-type', 'application/json');
    const parsed =
      request.headers.get('content-type')?.includes('json') && text !== '' ? JSON.parse(text) : text;
    return new Response(JSON.stringify({ id: randomUUID(), n, body: parsed }), { status: 201, headers });
  });
  post('/text', (request) => new Response(`hello ${counters.bump('text', keyOf(request))}`));
  post('/binary', (request) => {
    const bytes = new Uint8Array(binaryBody(counters.bump('binary', keyOf(request))));
    return new Response(bytes, { headers: { 'content-type': 'application/octet-stream' } });
  });
  post('/stream', (request) => {
    const n = counters.bump('stream', keyOf(request));
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
    return new Response(stream, { headers: { 'content-type': 'text/plain' } });
  });
  post('/empty', (request) => {
    counters.bump('empty', keyOf(request));
    return new Response(null, { status: 204 });
  });
  post('/status/:code', (request) => {
    const n = counters.bump('status', keyOf(request));
    return json({ n }, Number(new URL(request.url).pathname.split('/')[2]));
  });
  post('/fail-once', (request) => {
    const n = counters.bump('fail-once', keyOf(request));
    return json({ n }, n === 1 ? 500 : 201);
  });
  post('/throw', (request) => {
    const n = counters.bump('throw', keyOf(request));
    if (n === 1) throw new Error('boom');
    return json({ n }, 201);
  });
  post('/skip', (request) => {
    const n = counters.bump('skip', keyOf(request));
    idempotencyOf(request)?.skipStorage();
    return json({ n }, 201);
  });
  post('/large', (request) => json({ n: counters.bump('large', keyOf(request)), pad: LARGE_PAD }, 201));
  post('/slow', async (request) => {
    const key = keyOf(request)!;
    const n = counters.bump('slow', key);
    gates.arrived.add(key);
    await gates.wait(key);
    return json({ n, id: randomUUID() }, 201);
  });
  post('/defer', (request) => {
    const context = idempotencyOf(request)!;
    const n = counters.bump('defer', context.key);
    return context.defer(async () => {
      await gates.wait(context.key);
      return { status: 201, json: { n } };
    });
  });
  routes.set('GET /payments', () => json({ n: counters.bump('get-payments', undefined) }, 200));
  return routes;
}
