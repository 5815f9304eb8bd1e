/**
 * @module What `oncely/fetch` does beyond the shared semantics table: the runtime's own arguments and Request
 * object reach the handler, `idempotencyOf` finds the context of that object only, options are checked once, the
 * `route` option scopes by template, a request over `maxRequestBytes` is refused before its body is read, and a
 * handler's broken answer (not a Response, a body that fails) releases the key.
 */
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, isInvalidOptionsError } from '../../src/core/errors.js';
import { idempotency, idempotencyOf, withIdempotency } from '../../src/http/fetch.js';
import { MemoryStore } from '../../src/index.js';
import { defaultId } from '../http/support/fixture.js';

const base = (store = new MemoryStore()) => ({ store, logger: false as const });

function post(
  path: string,
  key: string | undefined,
  body = '{"amount":1}',
  headers: Record<string, string> = {},
) {
  return new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
      ...headers,
    },
    body,
  });
}

/** A Request subclass, as Next.js hands a `NextRequest` to route handlers. */
class FrameworkRequest extends Request {
  readonly framework = true;
}

describe('oncely/fetch: the handler', () => {
  it("gets the runtime's own Request object (body unread) and every argument after it, untouched", async () => {
    const seen: unknown[] = [];
    const params = { params: Promise.resolve({ id: '42' }) };
    const handler = withIdempotency(
      async (request: FrameworkRequest, context: typeof params, extra: string) => {
        seen.push(
          request,
          request.framework,
          await request.json(),
          context,
          extra,
          idempotencyOf(request)?.key,
        );
        return Response.json({ ok: true }, { status: 201 });
      },
      base(),
    );
    const request = new FrameworkRequest(post('/orders/42', 'k1'));
    const response = await handler(request, params, 'third');
    expect(response.status).toBe(201);
    expect(seen).toEqual([request, true, { amount: 1 }, params, 'third', 'k1']);
    expect(seen[0]).toBe(request);
  });

  it('finds no context for a request the layer let through, nor for a copy of the one it claimed for', async () => {
    const found: unknown[] = [];
    const idem = idempotency({ ...base(), required: false });
    const handler = idem.wrap(async (request: Request) => {
      found.push(idempotencyOf(request) !== undefined, idempotencyOf(new Request(request)));
      return new Response('ok');
    });
    await handler(post('/a', undefined));
    await handler(new Request('http://localhost/a'));
    await handler(post('/a', 'k2'));
    expect(found).toEqual([false, undefined, false, undefined, true, undefined]);
  });

  it("hands the middleware's next the same Request, with its context", async () => {
    const idem = idempotency(base());
    const request = post('/payments', 'k3');
    let given: Request | undefined;
    const response = await idem(request, (next) => {
      given = next;
      return new Response(String(idempotencyOf(next)?.token));
    });
    expect(given).toBe(request);
    expect(Number(await response.text())).toBeGreaterThan(0);
  });

  it('a handler that returns something else than a Response gets a TypeError, and the key is released', async () => {
    const store = new MemoryStore();
    let runs = 0;
    const handler = withIdempotency(async () => {
      runs++;
      return (runs === 1 ? { status: 201 } : new Response('second', { status: 201 })) as Response;
    }, base(store));
    await expect(handler(post('/p', 'k4'))).rejects.toThrow(/must return a Response, got Object/);
    expect((await store.get(defaultId('POST', '/p', 'k4')))?.state).not.toBe('inProgress');
    const retry = await handler(post('/p', 'k4'));
    expect(await retry.text()).toBe('second');
    expect(runs).toBe(2);
  });

  it("a Response of another class than the global one (undici's, from fetch(), once @hono/node-server swapped the global) is read like any", async () => {
    const { serve } = await import('@hono/node-server');
    const server = serve({ fetch: () => new Response('served'), port: 0, hostname: '127.0.0.1' });
    try {
      if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
      const upstream = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
      expect(upstream instanceof Response, 'the global Response was not swapped').toBe(false);
      let runs = 0;
      const handler = withIdempotency(() => {
        runs++;
        return upstream;
      }, base());
      const first = await handler(post('/proxy', 'k10'));
      expect([first.status, await first.text()]).toEqual([200, 'served']);
      const replay = await handler(post('/proxy', 'k10'));
      expect([replay.headers.get('idempotent-replayed'), await replay.text()]).toEqual(['true', 'served']);
      expect(runs).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a response body that fails while it is read releases the key, and the error reaches the runtime', async () => {
    let runs = 0;
    const handler = withIdempotency(async () => {
      runs++;
      if (runs > 1) return new Response('fine', { status: 201 });
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.error(new Error('upstream went away'));
        },
      });
      return new Response(body, { status: 201 });
    }, base());
    await expect(handler(post('/p', 'k5'))).rejects.toThrow('upstream went away');
    expect((await handler(post('/p', 'k5'))).status).toBe(201);
    expect(runs).toBe(2);
  });

  it('the status route takes an id or a Request whose last path segment is the id', async () => {
    const idem = idempotency(base());
    const unknown = 'A'.repeat(43);
    for (const answer of [
      await idem.status(unknown),
      await idem.status(new Request(`http://x/operations/${unknown}?q=1`)),
    ]) {
      expect(answer.status).toBe(404);
      expect((await answer.json()).type).toMatch(/#operation-not-found$/);
    }
  });
});

describe('oncely/fetch: the request', () => {
  it('over maxRequestBytes by Content-Length is refused with 413 before its body is read', async () => {
    let pulled = 0;
    let runs = 0;
    const handler = withIdempotency(
      () => {
        runs++;
        return new Response('ran');
      },
      { ...base(), maxRequestBytes: 100 },
    );
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(64));
      },
    });
    const request = new Request('http://localhost/upload', {
      method: 'POST',
      headers: { 'idempotency-key': 'k6', 'content-length': '1000' },
      body,
      duplex: 'half',
    } as RequestInit);
    const answer = await handler(request);
    expect(answer.status).toBe(413);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(runs).toBe(0);
    // The stream's start may queue one chunk ahead of any read; nothing asked it for the body.
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it('over maxRequestBytes without a Content-Length is refused once the count passes it', async () => {
    let runs = 0;
    const handler = withIdempotency(
      () => {
        runs++;
        return new Response('ran');
      },
      { ...base(), maxRequestBytes: 100 },
    );
    const chunks = [new Uint8Array(60), new Uint8Array(60), new Uint8Array(60)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks.shift();
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const request = new Request('http://localhost/upload', {
      method: 'POST',
      headers: { 'idempotency-key': 'k7' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect((await handler(request)).status).toBe(413);
    expect(runs).toBe(0);
    const exact = await handler(post('/upload', 'k7', 'x'.repeat(100), { 'content-type': 'text/plain' }));
    expect(exact.status).toBe(200);
    expect(runs).toBe(1);
  });

  it('with route, the template scopes the record: one key on /orders/1 and /orders/2 is a reuse (422)', async () => {
    const runs: string[] = [];
    const handler = (request: Request) => {
      runs.push(new URL(request.url).pathname);
      return new Response('ok', { status: 201 });
    };
    const templated = withIdempotency(handler, { ...base(), route: '/orders/[id]' });
    expect((await templated(post('/orders/1', 'k8'))).status).toBe(201);
    const reused = await templated(post('/orders/2', 'k8'));
    expect(reused.status).toBe(422);
    const byPath = withIdempotency(handler, { ...base(), route: (request) => new URL(request.url).pathname });
    expect((await byPath(post('/orders/1', 'k8'))).status).toBe(201);
    expect((await byPath(post('/orders/2', 'k8'))).status).toBe(201);
    expect(runs).toEqual(['/orders/1', '/orders/1', '/orders/2']);
  });

  it('a route function that returns no string fails that request with InvalidOptionsError', async () => {
    const handler = withIdempotency(() => new Response('ran'), {
      ...base(),
      route: () => 42 as unknown as string,
    });
    await expect(handler(post('/p', 'k9'))).rejects.toThrow(InvalidOptionsError);
  });
});

describe('oncely/fetch: options are checked once, at construction', () => {
  const handler = () => new Response('ok');
  for (const [label, options] of [
    ['an unknown option', { storee: 1 }],
    ['maxRequestBytes not a whole number', { maxRequestBytes: 1.5 }],
    ['maxRequestBytes below zero', { maxRequestBytes: -1 }],
    ['route not a path', { route: 'orders/[id]' }],
    ['route neither a string nor a function', { route: 42 }],
    ['methods with GET', { methods: ['GET'] }],
  ] as const) {
    it(`refuses ${label}`, () => {
      let thrown: unknown;
      try {
        withIdempotency(handler, { ...base(), ...(options as object) });
      } catch (error) {
        thrown = error;
      }
      expect(isInvalidOptionsError(thrown), String(thrown)).toBe(true);
    });
  }

  it('refuses a handler that is not a function', () => {
    expect(() => withIdempotency('nope' as never, base())).toThrow(/handler to wrap must be a function/);
  });
});
