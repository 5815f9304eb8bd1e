import express from 'express';
import Fastify, { type FastifyReply } from 'fastify';
import { Hono } from 'hono';
import { MemoryStore } from 'oncely';
import { idempotency as expressIdempotency, type IdempotencyContext } from 'oncely/express';
import { idempotency as fastifyIdempotency } from 'oncely/fastify';
import { idempotency as honoIdempotency } from 'oncely/hono';
import { type NodeListener, type NodeRequestExtras, idempotency as nodeIdempotency } from 'oncely/node';
import { describe, expectTypeOf, it } from 'vitest';

// What each adapter promises a handler's types. `npm test` type-checks this file (`npm run typecheck`) before it runs
// anything: a broken augmentation fails the run there. At run time the assertions are no-ops; the handlers are
// registered but never called. The packed package's declarations get the same checks in
// test/package/fixtures/consumer.mts.
const store = new MemoryStore();

describe('adapter types', () => {
  it('Express: res.locals.idempotency is the context or undefined', () => {
    const app = express();
    app.post('/payments', expressIdempotency({ store }), (_req, res) => {
      expectTypeOf(res.locals.idempotency).toEqualTypeOf<IdempotencyContext | undefined>();
      expectTypeOf(res.locals.idempotency).not.toBeAny();
    });
  });

  it('Hono: c.get("idempotency") and c.var.idempotency are the context', () => {
    const app = new Hono();
    app.post('/payments', honoIdempotency({ store }), (c) => {
      expectTypeOf(c.get('idempotency')).toEqualTypeOf<IdempotencyContext<Response>>();
      expectTypeOf(c.var.idempotency).toEqualTypeOf<IdempotencyContext<Response>>();
      expectTypeOf(c.get('idempotency').defer).returns.toEqualTypeOf<Response>();
      return c.body(null, 204);
    });
  });

  it('Fastify: request.idempotency is the context or null', () => {
    const app = Fastify();
    app.register(fastifyIdempotency, { store });
    app.post('/payments', { config: { idempotency: true } }, async (request) => {
      expectTypeOf(request.idempotency).toEqualTypeOf<IdempotencyContext<FastifyReply> | null>();
      return {};
    });
  });

  it('Fastify: route config.idempotency takes true, false or route options, and nothing else', () => {
    const app = Fastify();
    app.post('/on', { config: { idempotency: true } }, async () => ({}));
    app.post('/off', { config: { idempotency: false } }, async () => ({}));
    app.post(
      '/options',
      { config: { idempotency: { waitMs: 5_000, keepServerErrors: false } } },
      async () => ({}),
    );
    app.route({
      method: 'POST',
      url: '/route',
      config: { idempotency: { leaseMs: 1_000 } },
      handler: async () => ({}),
    });
    // @ts-expect-error a string is not a route option
    app.post('/string', { config: { idempotency: 'yes' } }, async () => ({}));
    // @ts-expect-error nor is a number, through app.route() either
    app.route({ method: 'POST', url: '/number', config: { idempotency: 1 }, handler: async () => ({}) });
    // @ts-expect-error route options are checked field by field
    app.post('/typo', { config: { idempotency: { waitMs: '5s' } } }, async () => ({}));
  });

  it('node:http: the handler gets the body and the context', () => {
    const listener = nodeIdempotency({ store })(async (req, res, extras) => {
      expectTypeOf(extras).toEqualTypeOf<NodeRequestExtras>();
      expectTypeOf(extras.body).toEqualTypeOf<Buffer | undefined>();
      expectTypeOf(extras.idempotency).toEqualTypeOf<IdempotencyContext | undefined>();
      expectTypeOf(req.method).toEqualTypeOf<string | undefined>();
      res.end();
    });
    expectTypeOf(listener).toEqualTypeOf<NodeListener>();
  });
});
