import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import Fastify, { type FastifyRequest } from 'fastify';
import { idempotency } from '../../../src/http/fastify.js';
import { type AdapterHarness, injectClient } from '../support/harness.js';
import { binaryBody, LARGE_PAD } from '../support/routes.js';

const opted = { config: { idempotency: true } } as const;
const keyOf = (request: FastifyRequest) => request.idempotency?.key;

/** The suite's app on Fastify 5, exercised in-process with `inject()`. */
export const fastifyHarness: AdapterHarness = {
  name: 'fastify',
  rawBytes: false,
  async build({ options, counters, gates }) {
    const app = Fastify();
    app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    // Per-request headers of hooks before the layer: a request id and CORS, as @fastify/cors sets them.
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', randomUUID()).header('cache-control', 'no-store');
      if (request.headers.origin) reply.header('access-control-allow-origin', request.headers.origin);
    });
    await app.register(idempotency, options as never);

    app.post('/payments', opted, async (request, reply) => {
      const n = counters.bump('payments', keyOf(request));
      reply
        .header('x-handler', 'yes')
        .header('cache-control', 'private')
        .header('set-cookie', ['session=abc; Path=/', 'theme=dark; Path=/'])
        .code(201);
      return { id: randomUUID(), n, body: request.body };
    });
    app.post('/text', opted, async (request, reply) => {
      reply.type('text/plain');
      return `hello ${counters.bump('text', keyOf(request))}`;
    });
    app.post('/binary', opted, async (request, reply) => {
      reply.type('application/octet-stream');
      return binaryBody(counters.bump('binary', keyOf(request)));
    });
    app.post('/stream', opted, async (request, reply) => {
      const n = counters.bump('stream', keyOf(request));
      reply.type('text/plain');
      return reply.send(
        Readable.from([Buffer.from('part1-'), Buffer.from('part2-'), Buffer.from(String(n))]),
      );
    });
    app.post('/empty', opted, async (request, reply) => {
      counters.bump('empty', keyOf(request));
      return reply.code(204).send();
    });
    app.post('/status/:code', opted, async (request, reply) => {
      const n = counters.bump('status', keyOf(request));
      reply.code(Number((request.params as { code: string }).code));
      return { n };
    });
    app.post('/fail-once', opted, async (request, reply) => {
      const n = counters.bump('fail-once', keyOf(request));
      reply.code(n === 1 ? 500 : 201);
      return { n };
    });
    app.post('/throw', opted, async (request, reply) => {
      const n = counters.bump('throw', keyOf(request));
      if (n === 1) throw new Error('boom');
      reply.code(201);
      return { n };
    });
    app.post('/skip', opted, async (request, reply) => {
      const n = counters.bump('skip', keyOf(request));
      request.idempotency?.skipStorage();
      reply.code(201);
      return { n };
    });
    app.post('/large', opted, async (request, reply) => {
      reply.code(201);
      return { n: counters.bump('large', keyOf(request)), pad: LARGE_PAD };
    });
    app.post('/slow', opted, async (request, reply) => {
      const key = keyOf(request)!;
      const n = counters.bump('slow', key);
      gates.arrived.add(key);
      await gates.wait(key);
      reply.code(201);
      return { n, id: randomUUID() };
    });
    app.post('/defer', opted, async (request) => {
      const context = request.idempotency!;
      const n = counters.bump('defer', context.key);
      return context.defer(async () => {
        await gates.wait(context.key);
        return { status: 201, json: { n } };
      });
    });
    app.get('/operations/:id', app.idempotencyStatus);
    app.get('/payments', async () => ({ n: counters.bump('get-payments', undefined) }));
    // Requests go through inject(); the socket is for tests that need real header lines.
    await app.listen({ port: 0, host: '127.0.0.1' });

    return {
      port: (app.server.address() as AddressInfo).port,
      request: injectClient(app),
      close: () => app.close(),
    };
  },
};
