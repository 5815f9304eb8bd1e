/**
 * One tRPC server process for storm.test.ts: tRPC's standalone HTTP adapter on node:http, a `pay` mutation made
 * idempotent by oncely/trpc on a RedisStore shared with the other process. The effect is an INCR in Redis per key, so
 * the test counts executions across both processes; the answer names the process that ran it. Prints
 * `listening <port>`.
 */
import { initTRPC } from '@trpc/server';
import { createHTTPServer } from '@trpc/server/adapters/standalone';
import { Redis } from 'ioredis';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { idempotent } from '../../../src/trpc/index.js';

const { redisUrl, prefix, waitMs } = JSON.parse(process.argv[2] ?? '{}') as {
  redisUrl: string;
  prefix: string;
  waitMs: number;
};
const client = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
client.on('error', (error) => console.error('redis:', error.message));
await new Promise((resolve) => client.once('ready', resolve));
const store = new RedisStore({ client, prefix });

const t = initTRPC.context<{ headers: Headers }>().create();
const app = t.router({
  pay: t.procedure
    .input((raw) => raw as { cents: number })
    .use(idempotent<unknown, { headers: Headers }>({ store, headers: (ctx) => ctx.headers, waitMs }))
    .mutation(async ({ input, ctx }) => {
      const key = ctx.headers.get('idempotency-key') ?? '';
      // The effect, seen by the test whichever process ran it; long enough for the duplicates to meet it.
      const runs = await client.incr(`${prefix}:effects:${key}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
      return { key, cents: input.cents, runs, by: process.pid };
    }),
});

const server = createHTTPServer({
  router: app,
  createContext: ({ req }) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
    return { headers };
  },
});
server.listen(0, '127.0.0.1');
server.once('listening', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.stdout.write(`listening ${address.port}\n`);
});
