/**
 * @module `oncely/fetch` on real runtimes: the same app (apps/runtime-app.ts, withIdempotency on RedisStore with
 * ioredis) served by Bun (`Bun.serve`, running the TypeScript sources as they are) and by Deno (`Deno.serve`, the
 * sources through `--sloppy-imports`, which resolves their `.js` specifiers to the `.ts` files, and
 * ioredis from node_modules through package.json), answered over real sockets.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireService, services } from '../support/services.js';
import { systemTool } from '../support/system-tool.js';
import { type RuntimeServer, startRuntimeServer } from './support/runtime-server.js';

const bin = (name: string) => fileURLToPath(new URL(`../../node_modules/.bin/${name}`, import.meta.url));

const runtimes = [
  { name: 'Bun', command: bin('bun'), args: ['test/fetch/apps/bun-server.ts'] },
  {
    name: 'Deno',
    command: bin('deno'),
    args: [
      'run',
      '--sloppy-imports',
      '--allow-net',
      '--allow-env',
      '--allow-read',
      'test/fetch/apps/deno-server.ts',
    ],
  },
] as const;

const STORM_KEYS = 10;
const STORM_PER_KEY = 5;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
}

// A binary that cannot run at all (npm install not done, an unsupported CPU): skipped outside CI, fails under it.
const runnable = new Map(
  runtimes.map((runtime) => [
    runtime.name,
    systemTool(runtime.name, [runtime.command, '--version'], 'npm install (a devDependency)'),
  ]),
);

for (const runtime of runtimes) {
  describe.runIf(runnable.get(runtime.name))(`oncely/fetch on ${runtime.name}, RedisStore (ioredis)`, () => {
    const prefix = `oncely-fetch-${runtime.name.toLowerCase()}-${randomUUID().slice(0, 8)}`;
    let redis: Redis;
    let server: RuntimeServer;

    beforeAll(async () => {
      await requireService('redis');
      redis = new Redis(services.redis.url, { maxRetriesPerRequest: 1 });
      server = await startRuntimeServer(runtime.name, runtime.command, runtime.args, {
        REDIS_URL: services.redis.url,
        ONCELY_PREFIX: prefix,
      });
    }, 90_000);

    afterAll(async () => {
      await server?.stop();
      if (redis === undefined) return;
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    const post = async (path: string, key: string, body: unknown): Promise<Answer> => {
      const response = await fetch(`${server.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        headers: response.headers,
        body: Buffer.from(await response.arrayBuffer()),
      };
    };
    const runs = async (key: string) => Number((await redis.get(`${prefix}:runs:${key}`)) ?? 0);

    it("a first run answers 201 with the runtime's own argument passed through; the retry replays it byte for byte", async () => {
      const key = randomUUID();
      const first = await post('/payments', key, { amount: 100 });
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      // Bun's server and Deno's info (the handler's second argument) told the handler who the client is.
      expect(first.headers.get('x-peer')).toMatch(/127\.0\.0\.1/);
      expect(JSON.parse(first.body.toString())).toMatchObject({ n: 1, amount: 100 });
      const replay = await post('/payments', key, { amount: 100 });
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(replay.body.equals(first.body)).toBe(true);
      expect(await runs(key)).toBe(1);
    });

    it('a duplicate while the first runs gets 409 + Retry-After; the first answer is then replayed', async () => {
      const key = randomUUID();
      const first = post('/slow', key, { amount: 5 });
      const deadline = Date.now() + 10_000;
      while ((await runs(key)) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      const duplicate = await post('/slow', key, { amount: 5 });
      expect(duplicate.status).toBe(409);
      expect(duplicate.headers.get('content-type')).toBe('application/problem+json');
      expect(Number(duplicate.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await redis.set(`${prefix}:gate:${key}`, 'open');
      const original = await first;
      expect(original.status).toBe(201);
      const replay = await post('/slow', key, { amount: 5 });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.equals(original.body)).toBe(true);
      expect(await runs(key)).toBe(1);
    });

    it('the same key with another body gets 422 and leaves the original replayable', async () => {
      const key = randomUUID();
      const first = await post('/payments', key, { amount: 100 });
      const other = await post('/payments', key, { amount: 999 });
      expect(other.status).toBe(422);
      expect(other.headers.get('content-type')).toBe('application/problem+json');
      expect(JSON.parse(other.body.toString()).type).toMatch(/#key-reused$/);
      expect((await post('/payments', key, { amount: 100 })).body.equals(first.body)).toBe(true);
      expect(await runs(key)).toBe(1);
    });

    it(`a storm of ${STORM_KEYS * STORM_PER_KEY} concurrent requests on ${STORM_KEYS} keys runs each key once; every other answer is a 409 or a byte-identical replay`, async () => {
      const keys = Array.from({ length: STORM_KEYS }, () => randomUUID());
      const sent = keys.flatMap((key) =>
        Array.from({ length: STORM_PER_KEY }, () => ({
          key,
          answer: post('/payments', key, { amount: 7, delayMs: 150 }),
        })),
      );
      const answers = await Promise.all(sent.map(async ({ key, answer }) => ({ key, ...(await answer) })));
      for (const key of keys) {
        const mine = answers.filter((answer) => answer.key === key);
        const originals = mine.filter(
          (a) => a.status === 201 && a.headers.get('idempotent-replayed') === null,
        );
        expect(originals, `key ${key}: ${mine.map((a) => a.status).join(', ')}`).toHaveLength(1);
        for (const answer of mine) {
          if (answer === originals[0]) continue;
          if (answer.status === 409)
            expect(answer.headers.get('content-type')).toBe('application/problem+json');
          else expect(answer.body.equals(originals[0]!.body)).toBe(true);
        }
        expect(await runs(key)).toBe(1);
        const after = await post('/payments', key, { amount: 7, delayMs: 150 });
        expect(after.headers.get('idempotent-replayed')).toBe('true');
        expect(after.body.equals(originals[0]!.body)).toBe(true);
      }
      // The storm overlapped: some duplicates arrived while their key's first run was still in flight.
      expect(answers.filter((answer) => answer.status === 409).length).toBeGreaterThan(0);
    }, 30_000);
  });
}

describe.runIf(runtimes.every((runtime) => runnable.get(runtime.name)))(
  'oncely/fetch on Bun and Deno at once, one Redis',
  () => {
    const prefix = `oncely-fetch-both-${randomUUID().slice(0, 8)}`;
    let redis: Redis;
    let servers: RuntimeServer[] = [];

    beforeAll(async () => {
      await requireService('redis');
      redis = new Redis(services.redis.url, { maxRetriesPerRequest: 1 });
      const env = { REDIS_URL: services.redis.url, ONCELY_PREFIX: prefix };
      servers = await Promise.all(
        runtimes.map((runtime) => startRuntimeServer(runtime.name, runtime.command, runtime.args, env)),
      );
    }, 90_000);

    afterAll(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      if (redis === undefined) return;
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    it('a storm split between the two runtimes runs each key once; the other runtime replays the same bytes', async () => {
      const keys = Array.from({ length: STORM_KEYS }, () => randomUUID());
      const send = async (server: RuntimeServer, key: string) => {
        const response = await fetch(`${server.baseUrl}/payments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ amount: 3, delayMs: 150 }),
        });
        return {
          key,
          status: response.status,
          headers: response.headers,
          body: Buffer.from(await response.arrayBuffer()),
        };
      };
      const answers = await Promise.all(
        keys.flatMap((key) =>
          Array.from({ length: STORM_PER_KEY + 1 }, (_, i) => send(servers[i % 2]!, key)),
        ),
      );
      for (const key of keys) {
        const mine = answers.filter((answer) => answer.key === key);
        const originals = mine.filter(
          (a) => a.status === 201 && a.headers.get('idempotent-replayed') === null,
        );
        expect(originals, `key ${key}: ${mine.map((a) => a.status).join(', ')}`).toHaveLength(1);
        expect(Number(await redis.get(`${prefix}:runs:${key}`))).toBe(1);
        // Whichever runtime ran it, both replay its bytes.
        for (const server of servers) {
          const replay = await send(server, key);
          expect(replay.headers.get('idempotent-replayed')).toBe('true');
          expect(replay.body.equals(originals[0]!.body)).toBe(true);
        }
      }
    }, 30_000);
  },
);
