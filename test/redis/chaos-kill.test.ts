/**
 * @module Redis SIGKILLed in the middle of requests, then brought back with its script cache flushed, under every
 * client at once (ioredis, iovalkey, node-redis, GLIDE: one server, the four clients on it, as services sharing one
 * Redis have). Each client is made as docs/stores/redis.md recommends, plus a quick reconnect so the test is short.
 * Then the case that shows why the page recommends `maxRetriesPerRequest: 0` on ioredis.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { Engine, type ExecuteResult } from '../../src/core/engine.js';
import { isStoreUnavailableError } from '../../src/core/errors.js';
import type { OncelyEvent } from '../../src/core/events.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { CLIENTS, type ClientName, connectClient, type MadeClient } from './support/clients.js';
import { useDisposableRedis } from './support/disposable.js';
import { eventually } from './support/eventually.js';
import { startRedis, stopAll } from './support/redis-server.js';
import { clientPorts, unreadBytes } from './support/unread.js';

const redis = useDisposableRedis({ reconnectMs: 50 });

const HUNG = Symbol('hung');
/** The engine's own timeout is 60 s and its breaker is off: an error within this bound came from the store. */
const NO_HANG_MS = 10_000;
const withinBound = <T>(promise: Promise<T>): Promise<T | typeof HUNG> =>
  Promise.race([
    promise,
    new Promise<typeof HUNG>((resolve) => setTimeout(() => resolve(HUNG), NO_HANG_MS).unref()),
  ]);
/** Each begin carries its script's 40-digit SHA: 100 begins are at least this many bytes on the wire. */
const BEGIN_BYTES = 40;

/** One client under the kill: its store and engine, the claims its engine granted and the code it ran. */
interface Rig {
  readonly name: ClientName;
  readonly made: MadeClient;
  /** The local ports of its connections to the server, to find them in the kernel's socket table. */
  readonly ports: ReadonlySet<number>;
  readonly store: RedisStore;
  readonly events: OncelyEvent[];
  readonly ran: number[];
  execute(key: string): Promise<ExecuteResult<string> | typeof HUNG>;
}

/** Connects `name` and notes which server connections are its own (the ones that appeared). */
async function rig(name: ClientName, handlersMayFinish: Promise<void>): Promise<Rig> {
  const before = await clientPorts(redis.admin);
  // GLIDE fails a call made while the server is down when its requestTimeout passes: half a second here.
  const made = await connectClient(name, redis.server.port, {
    reconnectMs: 50,
    glide: { requestTimeout: 500 },
  });
  const ports = new Set([...(await clientPorts(redis.admin))].filter((port) => !before.has(port)));
  const events: OncelyEvent[] = [];
  const ran: number[] = [];
  const store = new RedisStore({ client: made.client, prefix: `chaos-${name}-${randomUUID().slice(0, 8)}` });
  const engine = new Engine({
    store,
    storeTimeoutMs: 60_000,
    breaker: false,
    onEvent: (e) => events.push(e),
  });
  const execute = (key: string) =>
    withinBound(
      engine.execute({
        key,
        fingerprint: 'f',
        run: async ({ token }) => {
          ran.push(token);
          await handlersMayFinish;
          return 'charged';
        },
        settle: (result: string) => ({
          keep: true as const,
          outcome: { status: 201, headers: [], body: Buffer.from(result) },
        }),
      }),
    );
  return { name, made, ports, store, events, ran, execute };
}

/** Resolves once every rig's connections hold at least `bytes` the paused server has not read. */
async function onTheWire(rigs: readonly Rig[], bytes: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const unread = unreadBytes(redis.server.port);
    const short = rigs.filter((r) => [...r.ports].reduce((sum, p) => sum + (unread.get(p) ?? 0), 0) < bytes);
    if (short.length === 0) return;
    assert.ok(
      Date.now() < deadline,
      `the begins of ${short.map((r) => r.name).join(', ')} never reached the server's socket`,
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const NOSCRIPTS = /errorstat_NOSCRIPT:count=(\d+)/;
const noscripts = async () => Number(NOSCRIPTS.exec(await redis.admin.info('errorstats'))?.[1] ?? 0);

describe('Redis killed mid-request', () => {
  it(`on ${CLIENTS.join(', ')} at once: fails fast with StoreUnavailableError, runs no code without a claim, and recovers after restart and SCRIPT FLUSH`, async () => {
    let releaseHandlers!: () => void;
    const handlersMayFinish = new Promise<void>((resolve) => {
      releaseHandlers = resolve;
    });
    const rigs: Rig[] = [];
    for (const name of CLIENTS) rigs.push(await rig(name, handlersMayFinish));
    try {
      // On each client, 100 requests hold their claims with handlers running; then the server hangs (SIGSTOP),
      // 100 more begins per client go on the wire unanswered, and the server dies (SIGKILL) with them in flight.
      const running = rigs.map((r) =>
        Promise.allSettled(Array.from({ length: 100 }, (_, i) => r.execute(`running-${i}`))),
      );
      await eventually(async () => {
        const waiting = rigs
          .filter((r) => r.ran.length < 100)
          .map((r) => `${r.name}: ${r.ran.length} running`);
        assert.deepEqual(waiting, [], 'every client holds 100 claims');
      }, 10_000);
      redis.server.pause();
      const inFlight = rigs.map((r) =>
        Promise.allSettled(Array.from({ length: 100 }, (_, i) => r.execute(`in-flight-${i}`))),
      );
      await onTheWire(rigs, 100 * BEGIN_BYTES);
      for (const r of rigs) {
        const queue = (r.made.client as { commandQueue?: { length: number } }).commandQueue;
        // ioredis and iovalkey also count them: every begin sent, none answered.
        if (queue !== undefined) assert.equal(queue.length, 100, `${r.name}: the begins await replies`);
      }
      await redis.server.kill();
      releaseHandlers();
      // While it is down, new requests fail at once too.
      const whileDown = rigs.map((r) =>
        Promise.allSettled(Array.from({ length: 20 }, (_, i) => r.execute(`during-${i}`))),
      );
      const settled = await Promise.all(rigs.map((_, i) => Promise.all([running[i]!, inFlight[i]!])));
      const during = await Promise.all(whileDown);

      rigs.forEach((r, i) => {
        const [runningResults, inFlightResults] = settled[i]!;
        for (const result of [...runningResults, ...inFlightResults, ...during[i]!]) {
          assert.ok(
            result.status === 'rejected',
            `${r.name}: expected a failure, got ${String(result.status === 'fulfilled' && result.value.toString())}`,
          );
          assert.ok(isStoreUnavailableError(result.reason), `${r.name}: ${String(result.reason)}`);
        }
        assert.equal(r.ran.length, 100, `${r.name}: no code ran for the begins that never got an answer`);
        const granted = r.events.flatMap((e) => (e.type === 'acquired' ? [e.token] : []));
        assert.deepEqual(
          [...r.ran].sort(),
          [...granted].sort(),
          `${r.name}: code ran exactly for the claims the store granted`,
        );
      });

      // Back on the same port, empty (no persistence): each client reconnects on its own schedule.
      await redis.server.restart();
      await Promise.all(rigs.map((r) => eventually(() => r.store.get('reconnected'), 15_000)));
      await Promise.all(
        rigs.map(async (r) => {
          const recovered = await r.execute(`after-${randomUUID()}`);
          assert.ok(recovered !== HUNG && recovered.kind === 'executed', `${r.name}: served again`);
          // No abandoned begin was replayed by the driver after the reconnect: the retries of those keys run now.
          const retried = await Promise.all(
            Array.from({ length: 100 }, (_, i) => r.execute(`in-flight-${i}`)),
          );
          assert.ok(
            retried.every((result) => result !== HUNG && result.kind === 'executed'),
            `${r.name}: a key was held by a replayed begin`,
          );
        }),
      );

      // The script cache flushed under the clients' feet: each meets NOSCRIPT and recovers within the call.
      for (const r of rigs) {
        await redis.admin.script('FLUSH');
        const before = await noscripts();
        const key = `flushed-${randomUUID()}`;
        const first = await r.execute(key);
        const second = await r.execute(key);
        assert.ok(first !== HUNG && first.kind === 'executed', `${r.name}: executed after the flush`);
        assert.ok(second !== HUNG && second.kind === 'replayed', `${r.name}: replayed after the flush`);
        assert.ok((await noscripts()) > before, `${r.name}: NOSCRIPT was met and handled`);
      }
    } finally {
      releaseHandlers();
      await Promise.all(rigs.map((r) => r.made.close()));
    }
  }, 60_000);

  it('with ioredis defaults the engine timeout bounds the wait; the begin the driver replays later is released by the engine', async () => {
    // Why docs/stores/redis.md recommends maxRetriesPerRequest: 0: this is the behaviour it removes.
    const server2 = await startRedis();
    const lenient = new Redis({ port: server2.port, host: '127.0.0.1', retryStrategy: () => 50 });
    lenient.on('error', () => {});
    try {
      await new Promise((resolve) => lenient.once('ready', resolve));
      const store = new RedisStore({ client: lenient, prefix: `lenient-${randomUUID().slice(0, 8)}` });
      const engine = new Engine({ store, storeTimeoutMs: 300, breaker: false, leaseMs: 60_000 });
      const request = {
        key: 'k',
        fingerprint: 'f',
        run: async () => 'ran',
        settle: () => ({ keep: false as const }),
      };
      server2.pause();
      await assert.rejects(engine.execute(request), isStoreUnavailableError);
      await server2.kill();
      await server2.restart();
      await new Promise((resolve) =>
        lenient.status === 'ready' ? resolve(undefined) : lenient.once('ready', resolve),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const record = await store.get('k');
      // The driver sent the abandoned begin after the reconnect; its late "acquired" is released at once, so the
      // key is not held for the 60 s lease by a claim nobody owns.
      assert.equal(record?.state, 'released', 'the begin the engine gave up on ran, and was released');
    } finally {
      lenient.disconnect();
      await stopAll([server2]);
    }
  });
});
