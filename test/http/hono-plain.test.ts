// oncely/hono on @hono/node-server with no middleware headers on the context: the layer's answers and the stored
// responses are read and written as node-server's lightweight Response with a plain header object (its fast
// path). The semantics suite's app sets headers in middleware on every route, which takes the other path.
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import { idempotency } from '../../src/http/hono.js';
import { lightweightParts } from '../../src/http/hono-lightweight.js';
import { MemoryStore } from '../../src/index.js';
import { closing, listening } from '../support/listen.js';

const app = new Hono();
let runs = 0;
const idem = idempotency({
  store: new MemoryStore(),
  scope: 'global',
  logger: false,
});
app.post('/links', idem, (c) => {
  runs++;
  c.header('link', '</a>; rel=a');
  c.header('link', '</b>; rel=b', { append: true });
  c.header('set-cookie', 'session=abc; Path=/');
  return c.json({ run: runs }, 201);
});
// One header given, one derived: node-server's lightweight Response says text/plain for a string body without one.
app.post('/text', idem, (c) => c.body(`text ${++runs}`, 200));
app.post('/typed', idem, (c) => c.body(`typed ${++runs}`, 200, { 'Content-Type': 'text/x-typed' }));
// A header object with an array value, which only code typed around HeadersInit makes: read as Headers would.
app.post('/listed', idem, () => {
  const headers = { 'content-type': 'text/plain', 'x-list': ['a', 'b'] } as unknown as Record<string, string>;
  return new Response(`listed ${++runs}`, { status: 200, headers });
});

// node-server's default is a node:http server (it makes an HTTP/2 one only when asked to).
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
const base = `http://127.0.0.1:${await listening(server)}`;
afterAll(closing(server));

const post = async (path: string, key: string) => {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'idempotency-key': key } });
  return {
    status: response.status,
    body: await response.text(),
    type: response.headers.get('content-type'),
    cookies: response.headers.getSetCookie(),
    replayed: response.headers.get('idempotent-replayed'),
    list: response.headers.get('x-list'),
    links: response.headers.get('link'),
  };
};

describe('oncely/hono on @hono/node-server, no middleware headers', () => {
  it('replays two values of one header, and never the Set-Cookie of the first answer', async () => {
    const first = await post('/links', 'plain-links');
    const replay = await post('/links', 'plain-links');
    expect(first.links).toBe('</a>; rel=a, </b>; rel=b');
    expect(first.cookies).toEqual(['session=abc; Path=/']);
    expect(replay).toEqual({ ...first, cookies: [], replayed: 'true' });
  });

  it('stores the Content-Type node-server gives a body without one, and a named one as given', async () => {
    const text = await post('/text', 'plain-text');
    expect(text.type).toBe('text/plain; charset=UTF-8');
    expect(await post('/text', 'plain-text')).toEqual({ ...text, replayed: 'true' });
    const typed = await post('/typed', 'plain-typed');
    expect(typed.type).toBe('text/x-typed');
    expect(await post('/typed', 'plain-typed')).toEqual({ ...typed, replayed: 'true' });
  });

  it("leaves the handler's response and its replay as node-server's lightweight Response with plain headers", async () => {
    // What node-server writes the fast way: a cached [status, body, headers] whose headers are not a Headers.
    const call = () =>
      app.fetch(
        new Request(`${base}/typed`, { method: 'POST', headers: { 'idempotency-key': 'plain-parts' } }),
      );
    for (const response of [await call(), await call()]) {
      const parts = lightweightParts(response);
      expect(parts, 'a lightweight Response').toBeDefined();
      expect(parts![2]).not.toBeInstanceOf(Headers);
      expect(typeof parts![2]).toBe('object');
    }
  });

  it('stores an array header value the way Headers reads it', async () => {
    const listed = await post('/listed', 'plain-listed');
    expect(listed.list).toBe('a,b');
    expect(await post('/listed', 'plain-listed')).toEqual({ ...listed, replayed: 'true' });
  });
});
