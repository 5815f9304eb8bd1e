import { createServer } from 'node:http';
import { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import { idempotency as honoIdempotency } from '../../src/http/hono.js';
import { idempotency as nodeIdempotency } from '../../src/http/node.js';
import { MemoryStore } from '../../src/index.js';
import { ATTR, METRIC, otel } from '../../src/otel/index.js';
import { closing, listening } from '../support/listen.js';
import { isChildOf, named, only, sdk, total, within } from './support/sdk.js';

const telemetry = sdk();
const instrumentation = otel({
  tracerProvider: telemetry.tracerProvider,
  meterProvider: telemetry.meterProvider,
});
afterAll(() => telemetry.shutdown());

const post = (key: string, body = '{"cents":5}') => ({
  method: 'POST',
  headers: { 'idempotency-key': key, 'content-type': 'application/json', authorization: 'Bearer client-1' },
  body,
});

describe('HTTP adapters: the execution span is a child of the request and its scope is the route', () => {
  it('Hono: method and route template, one span per request, replays counted by route', async () => {
    const app = new Hono();
    app.post('/orders/:id/pay', honoIdempotency({ store: new MemoryStore(), instrumentation }), (c) =>
      c.json({ paid: c.req.param('id') }, 201),
    );
    const { parent, result } = await within(telemetry.tracer, 'POST /orders/:id/pay', () =>
      Promise.resolve(app.request('/orders/42/pay', post('key-1'))),
    );
    expect(result.status).toBe(201);
    const replay = await app.request('/orders/42/pay', post('key-1'));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');

    const spans = named(telemetry.spans(), 'oncely POST /orders/:id/pay');
    expect(spans).toHaveLength(2);
    const first = spans.find((span) => span.attributes[ATTR.outcome] === 'acquired')!;
    expect(isChildOf(first, parent)).toBe(true);
    expect(first.attributes[ATTR.scope]).toBe('POST /orders/:id/pay');
    const metrics = await telemetry.metrics();
    const requests = metrics.get(METRIC.requests.name);
    expect(total(requests, { [ATTR.scope]: 'POST /orders/:id/pay', [ATTR.outcome]: 'acquired' })).toBe(1);
    expect(total(requests, { [ATTR.scope]: 'POST /orders/:id/pay', [ATTR.outcome]: 'replayed' })).toBe(1);
  });

  it('node:http knows no route template: the scope is the method alone, never the path with its ids', async () => {
    const idem = nodeIdempotency({ store: new MemoryStore(), instrumentation });
    const server = createServer(
      idem(async (_req, res) => {
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
      }),
    );
    server.listen(0, '127.0.0.1');
    try {
      const port = await listening(server);
      const answer = await fetch(`http://127.0.0.1:${port}/orders/77/refund`, post('key-2'));
      expect(answer.status).toBe(201);
    } finally {
      await closing(server)();
    }
    const execution = only(telemetry.spans(), 'oncely POST');
    expect(execution.attributes[ATTR.scope]).toBe('POST');
    for (const span of telemetry.spans())
      for (const value of Object.values(span.attributes)) expect(String(value)).not.toContain('/77/');
  });
});
