import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { Engine, type ExecuteResult } from '../../src/core/engine.js';
import { isStoreUnavailableError } from '../../src/core/errors.js';
import type { OncelyEvent } from '../../src/core/events.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { useDisposableRedis } from './support/disposable.js';
import { startRedis, stopAll } from './support/redis-server.js';

// SIGKILL the store in the middle of requests, then bring it back with its script cache flushed. The store client
// is the one docs/stores/redis.md recommends, plus a quick reconnect so the test is short.
const redis = useDisposableRedis({ reconnectMs: 50 });

const HUNG = Symbol('hung');
/** The engine's own timeout is 60 s and its breaker is off: an error within this bound came from the store. */
const NO_HANG_MS = 10_000;
const withinBound = <T>(promise: Promise<T>): Promise<T | typeof HUNG> =>
  Promise.race([
    promise,
    new Promise<typeof HUNG>((resolve) => setTimeout(() => resolve(HUNG), NO_HANG_MS).unref()),
  ]);

describe('Redis killed mid-request', () => {
  it('fails fast with StoreUnavailableError, runs no code without a claim, and recovers after restart and SCRIPT FLUSH', async () => {
    const { client } = redis;
    const events: OncelyEvent[] = [];
    const store = new RedisStore({ client, prefix: `chaos-${randomUUID().slice(0, 8)}` });
    const engine = new Engine({
      store,
      storeTimeoutMs: 60_000,
      breaker: false,
      onEvent: (e) => events.push(e),
    });
    const ran: number[] = [];
    let releaseHandlers!: () => void;
    const handlersMayFinish = new Promise<void>((resolve) => {
      releaseHandlers = resolve;
    });
    const execute = (key: string): Promise<ExecuteResult<string> | typeof HUNG> =>
      withinBound(
        engine.execute({
          key,
          fingerprint: 'f',
          run: async ({ token }) => {
            ran.push(token);
            await handlersMayFinish;
            return 'charged';
          },
          settle: (result) => ({
            keep: true,
            outcome: { status: 201, headers: [], body: Buffer.from(result) },
          }),
        }),
      );

    // 100 requests hold their claims with handlers running; then the server hangs (SIGSTOP), 100 more begins go
    // on the wire unanswered, and the server dies (SIGKILL) with those begins in flight.
    const running = Promise.allSettled(Array.from({ length: 100 }, (_, i) => execute(`running-${i}`)));
    while (ran.length < 100) await new Promise((resolve) => setTimeout(resolve, 5));
    redis.server.pause();
    const inFlight = Promise.allSettled(Array.from({ length: 100 }, (_, i) => execute(`in-flight-${i}`)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(client.commandQueue.length, 100, 'the begins are on the wire, awaiting replies');
    await redis.server.kill();
    releaseHandlers();
    const [runningResults, inFlightResults] = await Promise.all([running, inFlight]);
    // While it is down, new requests fail at once too.
    const duringResults = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => execute(`during-${i}`)),
    );

    for (const result of [...runningResults, ...inFlightResults, ...duringResults]) {
      assert.ok(
        result.status === 'rejected',
        `expected a failure, got ${String(result.status === 'fulfilled' && result.value.toString())}`,
      );
      assert.ok(isStoreUnavailableError(result.reason), String(result.reason));
    }
    assert.equal(ran.length, 100, 'no code ran for the begins that never got an answer');
    const granted = events.flatMap((e) => (e.type === 'acquired' ? [e.token] : []));
    assert.deepEqual(
      [...ran].sort(),
      [...granted].sort(),
      'code ran exactly for the claims the store granted',
    );

    // Back on the same port, empty (no persistence); then its script cache is flushed under the client's feet.
    await redis.server.restart();
    await new Promise((resolve) =>
      client.status === 'ready' ? resolve(undefined) : client.once('ready', resolve),
    );
    const recovered = await execute(`after-${randomUUID()}`);
    assert.ok(recovered !== HUNG && recovered.kind === 'executed');
    // No abandoned begin was replayed by the driver after the reconnect: the retries of those keys run now.
    const retried = await Promise.all(Array.from({ length: 100 }, (_, i) => execute(`in-flight-${i}`)));
    assert.ok(
      retried.every((r) => r !== HUNG && r.kind === 'executed'),
      'a key was held by a replayed begin',
    );
    const admin = new Redis({ port: redis.server.port, host: '127.0.0.1' });
    try {
      await admin.script('FLUSH');
      const key = `flushed-${randomUUID()}`;
      const first = await execute(key);
      const second = await execute(key);
      assert.ok(first !== HUNG && first.kind === 'executed');
      assert.ok(second !== HUNG && second.kind === 'replayed');
      assert.match(
        await admin.info('errorstats'),
        /errorstat_NOSCRIPT:count=[1-9]/,
        'NOSCRIPT was met and handled',
      );
    } finally {
      admin.disconnect();
    }
  });

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
