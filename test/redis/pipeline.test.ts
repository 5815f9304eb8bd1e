/**
 * What batching saves, counted on a disposable redis-server by the server itself: `total_reads_processed` (its read
 * calls on client sockets, one per batch of bytes it found) and `total_net_input_bytes`, over 100 claims on
 * distinct keys made the way requests arrive, each from its own timer callback in one loop turn, and all in one
 * tick; with `pipeline` on (the default) and off, on every client. Prints the table docs/stores/redis.md quotes.
 */
import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../src/stores/redis/index.js';
import { CLIENTS, type ClientName, connectClient, type MadeClient } from './support/clients.js';
import { useDisposableRedis } from './support/disposable.js';

const redis = useDisposableRedis();
const CALLS = 100;
const lease = { leaseMs: 10_000, retentionMs: 60_000 };
const table: string[] = [];

/** The server's read calls on client sockets so far (this INFO's own read included: subtracted by the caller). */
async function reads(): Promise<number> {
  const info = await redis.admin.info('stats');
  return Number(/total_reads_processed:(\d+)/.exec(info)?.[1]);
}

/**
 * Socket writes handed to the OS by this process towards the server (each `_write` or `_writev` of a socket is one
 * write call to libuv). GLIDE writes from its native core, out of sight here: its column reads 0.
 */
let writes = 0;
/** The server's port, once it runs (the patch below sees the sockets that start it too). */
let port: number | undefined;
beforeAll(() => {
  port = redis.server.port;
});
const proto = Socket.prototype as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
for (const method of ['_write', '_writev'] as const) {
  const original = proto[method]!;
  proto[method] = function (this: Socket, ...args: unknown[]) {
    if (port !== undefined && this.remotePort === port) writes++;
    return original.apply(this, args);
  };
}

type Arrival = 'timers' | 'one tick';

/** Server reads and client writes spent by CALLS claims made per `arrival`, the admin's own INFO excluded. */
async function measure(store: RedisStore, arrival: Arrival): Promise<{ reads: number; writes: number }> {
  const run = randomUUID().slice(0, 8);
  const claim = (i: number) => store.begin({ key: `${run}-${i}`, fingerprint: 'f', ...lease });
  const before = await reads();
  const writesBefore = writes;
  const claims =
    arrival === 'one tick'
      ? Array.from({ length: CALLS }, (_, i) => claim(i))
      : Array.from(
          { length: CALLS },
          (_, i) => new Promise((resolve, reject) => setTimeout(() => claim(i).then(resolve, reject), 0)),
        );
  const results = await Promise.all(claims);
  expect(results.every((r) => (r as { kind: string }).kind === 'acquired')).toBe(true);
  const written = writes - writesBefore;
  return { reads: (await reads()) - before - 1, writes: written };
}

afterAll(() => {
  console.log(
    [
      `${CALLS} claims: server reads (total_reads_processed) / client socket writes`,
      'client | arrival | pipeline on | pipeline off',
      ...table,
    ].join('\n'),
  );
});

describe.each(CLIENTS)('batching on %s', (name: ClientName) => {
  let made: MadeClient;

  beforeAll(async () => {
    made = await connectClient(name, redis.server.port);
  });
  afterAll(async () => {
    await made?.close();
  });

  it('sends a turn of claims in one batch: a handful of server reads for 100 claims, with pipeline on', async () => {
    const batched = new RedisStore({ client: made.client, prefix: `on-${name}` });
    const single = new RedisStore({ client: made.client, prefix: `off-${name}`, pipeline: false });
    // Warm: the scripts loaded on this connection, so no EVAL adds to the counts.
    await batched.begin({ key: 'warm', fingerprint: 'f', ...lease });
    await single.begin({ key: 'warm', fingerprint: 'f', ...lease });
    for (const arrival of ['timers', 'one tick'] as const) {
      const on = await measure(batched, arrival);
      const off = await measure(single, arrival);
      table.push(`${name} | ${arrival} | ${on.reads} / ${on.writes} | ${off.reads} / ${off.writes}`);
      expect(on.reads, `${arrival}: server reads with pipeline on`).toBeLessThanOrEqual(10);
      // The client side, where the JavaScript clients write: one write per node per batch.
      if (name !== 'glide')
        expect(on.writes, `${arrival}: client writes with pipeline on`).toBeLessThanOrEqual(2);
    }
    await batched.close();
    await single.close();
  });
});
