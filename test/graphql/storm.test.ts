/**
 * oncely/graphql over a real socket: yoga on node:http with RedisStore, a storm of 50 concurrent requests on 10
 * keys (five each, sent at once). Exactly one execution per key; every answer is the first call's value (the
 * duplicates wait for it with `waitMs`) or, without waiting, that value or IDEMPOTENCY_CONFLICT.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closing, listening } from '../support/listen.js';
import { redisStore } from '../support/stores.js';
import { app, counters, type GraphQLAnswer, post } from './app.js';

// One copy of graphql, as in an app: graphql-yoga, loaded by Node, gets graphql's CommonJS build, while Vite
// would give the sources it transforms (src/graphql) the ESM build, and yoga would take the plugin's GraphQLErrors
// for foreign errors and mask them. An app loads both through Node, so they share one copy there.
vi.mock('graphql', () => import('graphql/index.js'));

const KEYS = 10;
const PER_KEY = 5;
const store = redisStore('graphql-storm');

describe('a storm over HTTP on Redis', () => {
  let close: (() => Promise<void>)[] = [];
  beforeAll(() => {
    close = [];
  });
  afterAll(async () => {
    for (const stop of close) await stop();
  });

  async function serve(waitMs: number) {
    const count = counters();
    count.delayMs = 200;
    const yoga = app(store.create(), count, { waitMs });
    const server = createServer(yoga);
    server.listen(0, '127.0.0.1');
    close.push(closing(server));
    const url = `http://127.0.0.1:${await listening(server)}/graphql`;
    return { count, url };
  }

  async function storm(url: string) {
    const keys = Array.from({ length: KEYS }, () => randomUUID());
    const sends: Promise<[string, GraphQLAnswer]>[] = [];
    for (let round = 0; round < PER_KEY; round++) {
      for (const key of keys) {
        sends.push(
          post(fetch, 'mutation { slow(cents: 5) { id label } }', { 'idempotency-key': key }, url).then(
            (answer) => [key, answer],
          ),
        );
      }
    }
    return { keys, answers: await Promise.all(sends) };
  }

  it('with waitMs: one execution per key, every answer the first call’s value', async () => {
    const { count, url } = await serve(10_000);
    const { keys, answers } = await storm(url);
    for (const key of keys) expect(count.byKey.get(key), key).toBe(1);
    const byKey = new Map<string, string>();
    for (const [key, answer] of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.errors).toBeUndefined();
      const value = JSON.stringify(answer.body.data);
      expect(byKey.get(key) ?? value).toBe(value);
      byKey.set(key, value);
    }
    expect(new Set(byKey.values()).size).toBe(KEYS);
  });

  it('without waiting: one execution per key, the others that value or IDEMPOTENCY_CONFLICT', async () => {
    const { count, url } = await serve(0);
    const { keys, answers } = await storm(url);
    for (const key of keys) expect(count.byKey.get(key), key).toBe(1);
    let conflicts = 0;
    for (const [, answer] of answers) {
      if (answer.status === 409) {
        conflicts += 1;
        expect(answer.body.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_CONFLICT');
      } else expect(answer.body.errors).toBeUndefined();
    }
    // The resolver holds its key for 200 ms: duplicates arrive while it runs.
    expect(conflicts).toBeGreaterThan(0);
  });
});
