/**
 * oncely/graphql on a real Apollo Server 5 (`startStandaloneServer` on a loopback socket) with RedisStore on the
 * machine's Redis: first run and a byte-identical replay, the argument key before the header, mismatch, a
 * concurrent duplicate (409, Retry-After, extensions), the store down (IDEMPOTENCY_UNAVAILABLE, the resolver never
 * run), queries untouched, the caller's scope from the HTTP headers, what `start()` refuses, and a storm of 50
 * identical mutations.
 */
import { randomUUID } from 'node:crypto';
import { ApolloServer } from '@apollo/server';
import { createSchema, createYoga } from 'graphql-yoga';
import { Redis } from 'ioredis';
import { isInvalidOptionsError, MemoryStore } from 'oncely';
import { apolloIdempotency, idempotentDirective, useIdempotency } from 'oncely/graphql';
import { RedisStore } from 'oncely/redis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../support/free-port.js';
import { redisStore } from '../support/stores.js';
import { type ApolloApp, apolloApp, apolloServer } from './apollo-app.js';
import { counters, type GraphQLAnswer, post, typeDefs } from './app.js';

// One copy of graphql, as in an app: Apollo Server, loaded by Node, gets graphql's CommonJS build, while Vite
// would give the sources it transforms (src/graphql) the ESM build, and Apollo would take the plugin's
// GraphQLErrors for foreign errors. An app loads both through Node, so they share one copy there.
vi.mock('graphql', () => import('graphql/index.js'));

const store = redisStore('graphql-apollo');
const PAY = 'mutation { pay(cents: 500, note: "lunch") { id cents note label } }';

const apps: ApolloApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.stop();
});

async function fresh(options: Parameters<typeof apolloApp>[2] = {}) {
  const count = counters();
  const app = await apolloApp(store.create(), count, options);
  apps.push(app);
  const send = (query: string, headers: Record<string, string> = {}) => post(fetch, query, headers, app.url);
  return { count, send };
}

function errorOf(answer: GraphQLAnswer, index = 0) {
  const error = answer.body.errors?.[index];
  expect(error, answer.text).toBeDefined();
  return error!;
}

describe('apolloIdempotency on Apollo Server with RedisStore', () => {
  it('runs a mutation once and replays its value byte for byte, through the sub-fields, without the resolver', async () => {
    const { count, send } = await fresh();
    const key = { 'idempotency-key': randomUUID() };
    const first = await send(PAY, key);
    const second = await send(PAY, key);
    expect(first.status).toBe(200);
    expect(first.body.errors).toBeUndefined();
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(count.runs.get('pay')).toBe(1);
    expect(first.body.data?.pay).toEqual({ id: 'pay_1', cents: 500, note: 'lunch', label: 'pay_1:500' });
    // Another key is another call.
    await send(PAY, { 'idempotency-key': randomUUID() });
    expect(count.runs.get('pay')).toBe(2);
  });

  it('takes the key from the idempotencyKey argument before the header; the same key as a header is another record', async () => {
    const { count, send } = await fresh();
    const argKey = randomUUID();
    const query = (note: string) =>
      `mutation { pay(cents: 1, note: "${note}", idempotencyKey: "${argKey}") { id note } }`;
    const first = await send(query('a'));
    expect(first.body.errors).toBeUndefined();
    const again = await send(query('a'), { 'idempotency-key': randomUUID() });
    expect(again.text).toBe(first.text);
    expect(count.runs.get('pay')).toBe(1);
    expect(errorOf(await send(query('b'))).extensions?.code).toBe('IDEMPOTENCY_MISMATCH');
    await send('mutation { pay(cents: 1, note: "a") { id } }', { 'idempotency-key': argKey });
    expect(count.runs.get('pay')).toBe(2);
  });

  it('refuses a missing key with IDEMPOTENCY_KEY_INVALID (400), the resolver not run', async () => {
    const { count, send } = await fresh();
    const missing = await send(PAY);
    expect(missing.status).toBe(400);
    expect(errorOf(missing).extensions).toEqual({ code: 'IDEMPOTENCY_KEY_INVALID', reason: 'missing' });
    expect(count.runs.get('pay')).toBeUndefined();
  });

  it('refuses the key with other arguments: IDEMPOTENCY_MISMATCH (422), the resolver not run', async () => {
    const { count, send } = await fresh();
    const key = { 'idempotency-key': randomUUID() };
    await send(PAY, key);
    const other = await send('mutation { pay(cents: 501, note: "lunch") { id } }', key);
    expect(other.status).toBe(422);
    expect(errorOf(other).path).toEqual(['pay']);
    expect(errorOf(other).extensions).toEqual({ code: 'IDEMPOTENCY_MISMATCH' });
    expect(count.runs.get('pay')).toBe(1);
  });

  it('answers a duplicate while the first runs with IDEMPOTENCY_CONFLICT (409, Retry-After) on that field alone', async () => {
    const { count, send } = await fresh();
    let open!: () => void;
    count.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const key = { 'idempotency-key': randomUUID() };
    const doc = 'mutation { slow(cents: 7) { id } plain(cents: 3) }';
    const first = send(doc, key);
    await vi.waitFor(() => expect(count.runs.get('slow')).toBe(1), { timeout: 5_000, interval: 5 });
    const duplicate = await send(doc, key);
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    const error = errorOf(duplicate);
    expect(error.path).toEqual(['slow']);
    expect(error.extensions).toEqual({ code: 'IDEMPOTENCY_CONFLICT', retryAfter: expect.any(Number) });
    expect(String(error.extensions?.retryAfter)).toBe(duplicate.headers.get('retry-after'));
    expect(duplicate.body.data).toEqual({ slow: null, plain: 3 });
    open();
    const answered = await first;
    expect(answered.body.errors).toBeUndefined();
    expect((await send(doc, key)).text).toBe(answered.text);
    expect(count.runs.get('slow')).toBe(1);
  });

  it('lets the key go when the resolver throws: its error as Apollo formats it, and a retry runs again', async () => {
    const { count, send } = await fresh();
    count.failures = 1;
    const key = { 'idempotency-key': randomUUID() };
    const doc = 'mutation { flaky(cents: 9) { id } }';
    const failed = await send(doc, key);
    expect(failed.status).toBe(200);
    expect(errorOf(failed)).toMatchObject({
      message: 'the card network is down',
      extensions: { code: 'INTERNAL_SERVER_ERROR' },
    });
    const retried = await send(doc, key);
    expect(retried.body.errors).toBeUndefined();
    expect((await send(doc, key)).text).toBe(retried.text);
    expect(count.runs.get('flaky')).toBe(2);
  });

  it('leaves queries, and mutation fields not opted in, untouched: no key needed, run every time', async () => {
    const { count, send } = await fresh();
    const key = { 'idempotency-key': randomUUID() };
    for (let i = 0; i < 2; i++) {
      const answer = await send('query { payment(id: "p1") { id label } runs }', key);
      expect(answer.body.errors).toBeUndefined();
      await send('mutation { plain(cents: 1) refund(cents: 2) { id } }', key);
    }
    expect((await send('mutation { plain(cents: 1) }')).body.data).toEqual({ plain: 1 });
    expect(count.runs.get('plain')).toBe(3);
    expect(count.runs.get('refund')).toBe(2);
  });

  it('scopes records by the caller: the HTTP request’s Authorization by default, or the scope option', async () => {
    const { count, send } = await fresh();
    const key = randomUUID();
    await send(PAY, { 'idempotency-key': key, authorization: 'Bearer alice' });
    await send(PAY, { 'idempotency-key': key, authorization: 'Bearer bob' });
    await send(PAY, { 'idempotency-key': key, authorization: 'Bearer alice' });
    expect(count.runs.get('pay')).toBe(2);

    const tenant = await fresh({ scope: (context) => context.tenant });
    await tenant.send(PAY, { 'idempotency-key': key, authorization: 'Bearer alice', 'x-tenant': 't1' });
    await tenant.send(PAY, { 'idempotency-key': key, authorization: 'Bearer bob', 'x-tenant': 't1' });
    expect(tenant.count.runs.get('pay')).toBe(1);
  });

  it('a storm of 50 concurrent identical mutations: one execution, 50 identical answers', async () => {
    const { count, send } = await fresh({ waitMs: 10_000 });
    count.delayMs = 200;
    const key = { 'idempotency-key': randomUUID() };
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => send('mutation { slow(cents: 5) { id label } }', key)),
    );
    expect(count.runs.get('slow')).toBe(1);
    expect(count.byKey.get(key['idempotency-key'])).toBe(1);
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.text).toBe(answers[0]!.text);
    }
    expect(answers[0]!.body).toEqual({ data: { slow: { id: 'pay_1', label: 'pay_1:5' } } });
  });
});

describe('apolloIdempotency with the store down', () => {
  const clients: Redis[] = [];
  afterAll(() => {
    for (const client of clients) client.disconnect();
  });

  it('answers IDEMPOTENCY_UNAVAILABLE (503, Retry-After: 1) on the field, without running the resolver', async () => {
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
    const app = await apolloApp(new RedisStore({ client }), count, { storeTimeoutMs: 500 });
    apps.push(app);
    const answer = await post(
      fetch,
      'mutation { slow(cents: 1) { id } plain(cents: 2) }',
      { 'idempotency-key': randomUUID() },
      app.url,
    );
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(errorOf(answer).path).toEqual(['slow']);
    expect(errorOf(answer).extensions).toEqual({ code: 'IDEMPOTENCY_UNAVAILABLE', retryAfter: 1 });
    expect(answer.body.data).toEqual({ slow: null, plain: 2 });
    expect(count.runs.get('slow')).toBeUndefined();
    // Queries do not touch the store.
    expect((await post(fetch, 'query { runs }', {}, app.url)).body).toEqual({ data: { runs: 1 } });
  });
});

describe('apolloIdempotency options and schema', () => {
  const memory = new MemoryStore();

  it('runs in process (executeOperation, no HTTP request): the argument key works, no key is IDEMPOTENCY_KEY_INVALID', async () => {
    const count = counters();
    const server = apolloServer(memory, count);
    const contextValue = { idempotencyKey: null, tenant: '' };
    const run = async (query: string) => {
      const response = await server.executeOperation({ query }, { contextValue });
      if (response.body.kind !== 'single') throw new Error('expected a single result');
      return response.body.singleResult;
    };
    const keyed = `mutation { pay(cents: 1, idempotencyKey: "${randomUUID()}") { id } }`;
    const first = await run(keyed);
    expect(first.errors).toBeUndefined();
    expect(await run(keyed)).toEqual(first);
    expect(count.runs.get('pay')).toBe(1);
    const unkeyed = await run('mutation { pay(cents: 1) { id } }');
    expect(unkeyed.errors?.[0]?.extensions).toEqual({ code: 'IDEMPOTENCY_KEY_INVALID', reason: 'missing' });
    await server.stop();
  });

  it('refuses bad options when the plugin is made, naming apolloIdempotency', () => {
    for (const options of [undefined, { store: memory, fieldz: [] }, { store: memory, waitMs: -1 }]) {
      const make = () => apolloIdempotency(options as unknown as Parameters<typeof apolloIdempotency>[0]);
      expect(make, JSON.stringify(options)).toThrow(/^apolloIdempotency: /);
      try {
        make();
      } catch (error) {
        expect(isInvalidOptionsError(error), String(error)).toBe(true);
      }
    }
  });

  it('start() rejects a coordinate that names no field, and a query field marked @idempotent', async () => {
    const rejection = async (server: { start(): Promise<void> }) => {
      const error = await server.start().then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(isInvalidOptionsError(error), String(error)).toBe(true);
      return (error as Error).message;
    };
    expect(await rejection(apolloServer(memory, counters(), { fields: ['Mutation.nope'] }))).toBe(
      'apolloIdempotency: the schema has no field Mutation.nope',
    );
    const marked = new ApolloServer({
      typeDefs: [idempotentDirective, typeDefs, 'extend type Query { marked: Int @idempotent }'],
      plugins: [apolloIdempotency({ store: memory })],
      stopOnTerminationSignals: false,
    });
    expect(await rejection(marked)).toMatch(/Query\.marked is marked @idempotent/);
  });

  it('start() rejects a schema object another oncely plugin made idempotent (a yoga server’s)', async () => {
    const schema = createSchema({ typeDefs: [idempotentDirective, typeDefs], resolvers: {} });
    createYoga({ schema, plugins: [useIdempotency({ store: memory })] });
    const server = new ApolloServer({
      schema,
      plugins: [apolloIdempotency({ store: memory })],
      stopOnTerminationSignals: false,
    });
    await expect(server.start()).rejects.toThrow(/made idempotent by another oncely GraphQL plugin/);
  });
});
