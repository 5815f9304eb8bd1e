/**
 * oncely/graphql when things go wrong around the resolver: the store cannot be reached (a RedisStore on a port
 * nobody listens on: IDEMPOTENCY_UNAVAILABLE, 503, retry-after, the resolver never runs), and options that are
 * refused when the plugin is made or the schema is set, never per request.
 */
import { randomUUID } from 'node:crypto';
import { createSchema, createYoga } from 'graphql-yoga';
import { Redis } from 'ioredis';
import { isInvalidOptionsError, MemoryStore } from 'oncely';
import { idempotentDirective, useIdempotency } from 'oncely/graphql';
import { RedisStore } from 'oncely/redis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../support/free-port.js';
import { app, counters, post, typeDefs } from './app.js';

// One copy of graphql, as in an app: graphql-yoga, loaded by Node, gets graphql's CommonJS build, while Vite
// would give the sources it transforms (src/graphql) the ESM build, and yoga would take the plugin's GraphQLErrors
// for foreign errors and mask them. An app loads both through Node, so they share one copy there.
vi.mock('graphql', () => import('graphql/index.js'));

describe('useIdempotency with the store down', () => {
  const clients: Redis[] = [];
  afterAll(() => {
    for (const client of clients) client.disconnect();
  });

  it('answers IDEMPOTENCY_UNAVAILABLE (503, retry-after) on the field, without running the resolver', async () => {
    const client = new Redis({
      host: '127.0.0.1',
      port: await freePort(),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    clients.push(client);
    const count = counters();
    const yoga = app(new RedisStore({ client }), count, { storeTimeoutMs: 500 });
    const answer = await post(yoga.fetch, 'mutation { slow(cents: 1) { id } plain(cents: 2) }', {
      'idempotency-key': randomUUID(),
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.body.errors?.[0]?.path).toEqual(['slow']);
    expect(answer.body.data).toEqual({ slow: null, plain: 2 });
    expect(answer.body.errors?.[0]?.extensions).toEqual({ code: 'IDEMPOTENCY_UNAVAILABLE', retryAfter: 1 });
    expect(count.runs.get('slow')).toBeUndefined();
    // Queries do not touch the store.
    const query = await post(yoga.fetch, 'query { runs }');
    expect(query.body).toEqual({ data: { runs: 1 } });
  });
});

describe('useIdempotency with a result past maxBodyBytes', () => {
  it('answers a retry IDEMPOTENCY_NOT_RETAINED (no 4xx or 5xx status: the effect happened), never running again', async () => {
    const count = counters();
    const yoga = app(new MemoryStore(), count, { maxBodyBytes: 16 });
    const key = { 'idempotency-key': randomUUID() };
    const first = await post(
      yoga.fetch,
      'mutation { pay(cents: 1, note: "a long enough note") { id } }',
      key,
    );
    expect(first.body.errors).toBeUndefined();
    const retry = await post(
      yoga.fetch,
      'mutation { pay(cents: 1, note: "a long enough note") { id } }',
      key,
    );
    expect(retry.status).toBe(200);
    expect(retry.body.errors?.[0]?.extensions).toEqual({ code: 'IDEMPOTENCY_NOT_RETAINED' });
    expect(count.runs.get('pay')).toBe(1);
  });
});

describe('useIdempotency options', () => {
  const schema = (options: Parameters<typeof useIdempotency>[0]) => () =>
    createYoga({
      schema: createSchema({
        typeDefs: [idempotentDirective, typeDefs, 'extend type Query { marked: Int @idempotent }'],
        resolvers: {},
      }),
      plugins: [useIdempotency(options)],
    });
  const store = new RedisStore({ client: new Redis({ lazyConnect: true }) });

  it('refuses bad options when the plugin is made', () => {
    const bad: unknown[] = [
      undefined,
      {},
      { store, fields: ['createPayment'] },
      { store, fields: 'Mutation.pay' },
      { store, directive: '@idempotent' },
      { store, keyArgument: 'idempotency-key' },
      { store, header: 'Idempotency Key' },
      { store, required: 'yes' },
      { store, scope: 'global' },
      { store, waitMs: -1 },
      { store, codec: {} },
      { store, fieldz: [] },
      { store, leaseMs: 1 },
    ];
    for (const options of bad) {
      const make = () => useIdempotency(options as Parameters<typeof useIdempotency>[0]);
      expect(make, JSON.stringify(options)).toThrow();
      try {
        make();
      } catch (error) {
        expect(isInvalidOptionsError(error), String(error)).toBe(true);
      }
    }
  });

  it('refuses, when the schema is set, a coordinate that names no field, or a query field (listed or marked)', () => {
    expect(schema({ store, directive: false, fields: ['Mutation.nope'] })).toThrow(
      /has no field Mutation\.nope/,
    );
    expect(schema({ store, directive: false, fields: ['Missing.pay'] })).toThrow(/has no field Missing\.pay/);
    expect(schema({ store, directive: false, fields: ['Query.runs'] })).toThrow(/only mutation fields/);
    expect(schema({ store })).toThrow(/Query\.marked is marked @idempotent/);
    expect(schema({ store, directive: 'other' })).not.toThrow();
  });

  it('refuses a second plugin on a schema object another one made idempotent', () => {
    const built = createSchema({ typeDefs: [idempotentDirective, typeDefs], resolvers: {} });
    createYoga({ schema: built, plugins: [useIdempotency({ store })] });
    expect(() => createYoga({ schema: built, plugins: [useIdempotency({ store })] })).toThrow(
      /made idempotent by another oncely GraphQL plugin/,
    );
  });
});
