import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { Redis, ReplyError } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isCorruptRecordError,
  isInvalidOptionsError,
  isStoreUnavailableError,
} from '../../src/core/errors.js';
import type { StoredOutcome } from '../../src/core/store.js';
import { shaOf } from '../../src/stores/redis/clients/evalsha.js';
import { toStoreError } from '../../src/stores/redis/connection.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { decodeRecord, decodeReplay } from '../../src/stores/redis/record.js';
import { COMPACT, peekHeader } from '../../src/stores/redis/record-header.js';
import { asBeginResult, decodeBeginReply, decodeReply } from '../../src/stores/redis/replies.js';
import { commandNames, registerScripts, runScript, type ScriptName } from '../../src/stores/redis/scripts.js';
import { requireService, services } from '../support/services.js';

// The Redis store's TypeScript around the scripts, on the machine's Redis: options, the connection gate, how
// replies and driver errors are read, the key layout, the record layout's limits and what it refuses (record.ts),
// stats, closing. The scripts are covered by store.test.ts, the conformance suite and script-guards.test.ts.
let client: Redis;
let admin: Redis;
beforeAll(async () => {
  await requireService('redis');
  client = new Redis(services.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  admin = new Redis(services.redis.url);
  await new Promise((resolve) => client.once('ready', resolve));
});
afterAll(async () => {
  const keys = ownKeys(await admin.keys('surface*'));
  if (keys.length > 0) await admin.del(...keys);
  client.disconnect();
  admin.disconnect();
});

const lease = { leaseMs: 10_000, retentionMs: 60_000 };
// Every key and channel of this file's run carries RUN, and only those are cleaned up: two runs of the file at
// once (`npm run mutate` runs one per worker) must not delete each other's records mid-test.
const RUN = randomUUID().slice(0, 8);
const prefix = () => `surface${RUN}-${randomUUID().slice(0, 8)}`;
const ownKeys = (keys: string[]) => keys.filter((key) => key.includes(`surface${RUN}-`));
const store = (options: Partial<RedisStoreOptions> = {}) =>
  new RedisStore({ client, prefix: prefix(), ...options });
/**
 * Answers the store's calls of one script on `target` (a standalone client: EVALSHA through `call`/`callBuffer`)
 * with `answer` instead of sending them; every other command goes through. Returns the undo.
 */
function intercept(
  target: Redis,
  name: ScriptName,
  answer: (send: () => Promise<unknown>) => Promise<unknown>,
): () => void {
  const methods = target as unknown as Record<
    'call' | 'callBuffer',
    (...args: unknown[]) => Promise<unknown>
  >;
  const saved = { call: methods.call, callBuffer: methods.callBuffer };
  for (const method of ['call', 'callBuffer'] as const) {
    methods[method] = function (this: unknown, ...args: unknown[]) {
      const send = () => saved[method].apply(this, args);
      return args[0] === 'evalsha' && args[1] === shaOf(name) ? answer(send) : send();
    };
  }
  return () => Object.assign(methods, saved);
}

const done: StoredOutcome = {
  status: 200,
  headers: [],
  body: Buffer.from('done'),
  encoding: 'identity',
  storage: 'inline',
};

describe('RedisStore options', () => {
  it('each refusal names what is wrong', () => {
    const lazy = new Redis({ lazyConnect: true });
    const cases: [unknown, RegExp][] = [
      [null, /RedisStore needs options/],
      ['redis://localhost', /RedisStore needs options/],
      [{ client: null }, /client must be an ioredis/],
      [{ client: { defineCommand: () => {}, pipeline: () => {} } }, /client must be an ioredis/],
      [{ client: { defineCommand: () => {}, status: 'ready' } }, /client must be an ioredis/],
      [{ client: { pipeline: () => {}, status: 'ready' } }, /client must be an ioredis/],
      [{ client, subscriber: {} }, /subscriber must be an ioredis/],
      [{ client, prefix: 5 }, /prefix must be a non-empty string/],
      [{ client, prefix: 'a b' }, /prefix must be a non-empty string/],
      [{ client, prefix: 'a}' }, /prefix must be a non-empty string/],
      [{ client, clock: 'now' }, /clock must be a function/],
      [{ client, durable: null }, /durable must be \{ replicas, timeoutMs \}/],
      [{ client, durable: 2 }, /durable must be \{ replicas, timeoutMs \}/],
      [{ client, durable: { timeoutMs: 10 } }, /durable needs both replicas and timeoutMs/],
      [{ client, durable: { replicas: 1, timeoutMs: 10, quorum: 1 } }, /RedisStore durable: unknown option/],
      [{ client, durable: { replicas: 1, timeoutMs: 0 } }, /durable\.timeoutMs must be/],
      [{ client, durable: { replicas: 0, timeoutMs: 1 } }, /durable\.replicas must be/],
      [{ client, connectWaitMs: -1 }, /connectWaitMs must be/],
      [{ client, pollIntervalMs: 0 }, /pollIntervalMs must be/],
      [{ client, statsScanLimit: 0 }, /statsScanLimit must be/],
    ];
    for (const [options, message] of cases)
      expect(() => new RedisStore(options as RedisStoreOptions), JSON.stringify(options)).toThrow(message);
    // The smallest values each option takes are accepted, and so is a subscriber of the caller's own.
    for (const options of [
      {
        client,
        durable: { replicas: 1, timeoutMs: 1 },
        connectWaitMs: 0,
        pollIntervalMs: 1,
        statsScanLimit: 1,
      },
      { client, subscriber: lazy },
    ])
      expect(() => new RedisStore(options)).not.toThrow();
    lazy.disconnect();
  });

  it("is named 'redis', and keeps records under '<prefix>:{<key>}', by default prefix 'oncely'", () => {
    const plain = new RedisStore({ client });
    expect(plain.name).toBe('redis');
    expect(plain.keys.record('abc')).toBe('oncely:{abc}');
    expect(plain.keys.keyOf('oncely:{abc}')).toBe('abc');
    for (const foreign of ['other:{abc}', 'oncely:{abc', 'oncely:abc}'])
      expect(plain.keys.keyOf(foreign)).toBeUndefined();
  });
});

describe('RedisStore connection gate', () => {
  it('a lazyConnect client that has not dialled yet connects on the first call (its offline queue on)', async () => {
    const lazy = new Redis(services.redis.url, { lazyConnect: true });
    try {
      expect(lazy.status).toBe('wait');
      const s = new RedisStore({ client: lazy, prefix: prefix() });
      expect(await s.get('k')).toBeUndefined();
    } finally {
      lazy.disconnect();
    }
  });

  it('a client still connecting is waited for, up to connectWaitMs', async () => {
    const connecting = new Redis(services.redis.url, { lazyConnect: true, enableOfflineQueue: false });
    try {
      const s = new RedisStore({ client: connecting, prefix: prefix(), connectWaitMs: 5_000 });
      void connecting.connect();
      expect(['connecting', 'connect']).toContain(connecting.status);
      const [first, second] = await Promise.all([
        s.begin({ key: 'k', fingerprint: 'f', ...lease }),
        s.get('k'),
      ]);
      expect(first.kind).toBe('acquired');
      expect(second === undefined || second.state === 'inProgress').toBe(true);
    } finally {
      connecting.disconnect();
    }
  });

  it('a server that accepts the connection and never answers is refused after connectWaitMs', async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const stuck = new Redis({ port, host: '127.0.0.1', enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    stuck.on('error', () => {});
    try {
      const s = new RedisStore({ client: stuck, prefix: prefix(), connectWaitMs: 100 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const started = Date.now();
      const error = await s.get('k').catch((e: unknown) => e);
      expect(isStoreUnavailableError(error)).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(90);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      stuck.disconnect();
      silent.close();
    }
  });

  it('a client that lost its server refuses at once instead of queueing', async () => {
    const gone = new Redis({
      port: 1,
      host: '127.0.0.1',
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    gone.on('error', () => {});
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const s = new RedisStore({ client: gone, prefix: prefix(), connectWaitMs: 10_000 });
      const started = Date.now();
      const error = await s.begin({ key: 'k', fingerprint: 'f', ...lease }).catch((e: unknown) => e);
      expect(isStoreUnavailableError(error)).toBe(true);
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      gone.disconnect();
    }
  });

  it('driver errors become store errors with the driver error as cause; WRONGTYPE means a corrupt record', () => {
    const wrongType = new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value');
    const corrupt = toStoreError('get', wrongType);
    expect(isCorruptRecordError(corrupt)).toBe(true);
    expect((corrupt as Error).cause).toBe(wrongType);
    const reset = new Error('read ECONNRESET');
    const unavailable = toStoreError('begin', reset);
    expect(isStoreUnavailableError(unavailable)).toBe(true);
    expect((unavailable as Error).cause).toBe(reset);
    expect(isStoreUnavailableError(toStoreError('begin', 'a string'))).toBe(true);
    expect(toStoreError('begin', unavailable)).toBe(unavailable);
  });
});

describe('RedisStore replies', () => {
  const corrupt = (reply: unknown) => () => decodeReply(reply);
  it('decodes every reply code, and reads anything else as a corrupt record, never as an answer', () => {
    expect(decodeReply([1, 7, 2, 1])).toEqual({ kind: 'acquired', token: 7, attempt: 2, takeover: true });
    expect(decodeReply([1, Buffer.from('7'), '2', 0])).toEqual({
      kind: 'acquired',
      token: 7,
      attempt: 2,
      takeover: false,
    });
    // begin's bare integer: the token of a first attempt.
    expect(decodeBeginReply(1795482858212)).toEqual({
      kind: 'acquired',
      token: 1795482858212,
      attempt: 1,
      takeover: false,
    });
    expect(decodeBeginReply([1, 7, 2, 1])).toEqual({
      kind: 'acquired',
      token: 7,
      attempt: 2,
      takeover: true,
    });
    for (const reply of [7.5, Number.NaN, 2 ** 53, [5], [6], null])
      expect(() => decodeBeginReply(reply), String(reply)).toThrow(
        expect.objectContaining({ name: 'CorruptRecordError' }),
      );
    expect(decodeReply([2, 1500, 3])).toEqual({ kind: 'inProgress', retryAfterMs: 1500, attempt: 3 });
    expect(decodeReply([3])).toEqual({ kind: 'mismatch' });
    expect(decodeReply([5])).toEqual({ kind: 'ok' });
    expect(decodeReply([6])).toEqual({ kind: 'fenced' });
    // A begin never answers ok or fenced: whoever wrote that reply, it is not this store's record.
    for (const reply of [[5], [6]])
      expect(() => asBeginResult(decodeReply(reply))).toThrow(
        expect.objectContaining({ name: 'CorruptRecordError' }),
      );
    for (const reply of [
      null,
      'OK',
      Buffer.from('OK'),
      5,
      [],
      ['1', 7, 2],
      [1, 'x', 2],
      [1, Buffer.from('x'), 2],
      [1, 7.5, 2],
      [1, 7],
      [2, null, 1],
      [2, 1500, {}],
      [-1, Buffer.from('a list')],
      [-1],
      [9],
    ])
      expect(corrupt(reply), JSON.stringify(reply)).toThrow(
        expect.objectContaining({ name: 'CorruptRecordError' }),
      );
  });

  it('a transition that answers like a begin, or a begin that answers like a transition, is corrupt', async () => {
    const s = store();
    let release: () => Promise<unknown> = async () => [1, 7, 1, 0];
    const undo = [intercept(client, 'begin', async () => [5]), intercept(client, 'release', () => release())];
    try {
      await expect(s.begin({ key: 'k', fingerprint: 'f', ...lease })).rejects.toSatisfy(isCorruptRecordError);
      await expect(s.release({ key: 'k', token: 7 })).rejects.toSatisfy(isCorruptRecordError);
      release = async () => [2, 10, 1];
      await expect(s.release({ key: 'k', token: 7 })).rejects.toSatisfy(isCorruptRecordError);
      release = async () => [6];
      await expect(s.release({ key: 'k', token: 7 })).resolves.toEqual({ kind: 'fenced' });
    } finally {
      for (const back of undo.reverse()) back();
    }
  });
});

describe('RedisStore scripts', () => {
  it('keeps a command the client already has (another copy of oncely registered it), and names a missing one', async () => {
    const own = new Redis(services.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    try {
      const methods = own as unknown as Record<string, unknown>;
      const registered = async () => null;
      methods[commandNames.get] = registered;
      registerScripts(own);
      expect(methods[commandNames.get]).toBe(registered);
      expect(typeof methods[commandNames.begin]).toBe('function');
      expect(() => runScript(new Redis({ lazyConnect: true }), 'get', 'k', [])).toThrow(
        expect.objectContaining({ name: 'InvalidOptionsError' }),
      );
    } finally {
      own.disconnect();
    }
  });
});

describe('RedisStore closed', () => {
  it('refuses every call once closed, closing twice changes nothing, and the caller’s client stays open', async () => {
    const s = store();
    const claim = await s.begin({ key: 'k', fingerprint: 'f', ...lease });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    const waiting = s.waitFor('k', { timeoutMs: 10_000 });
    await s.close();
    await s.close();
    expect(await waiting).toBe(false);
    const calls = [
      s.begin({ key: 'k', fingerprint: 'f', ...lease }),
      s.complete({ key: 'k', token: claim.token, outcome: done, retentionMs: 60_000 }),
      s.release({ key: 'k', token: claim.token }),
      s.get('k'),
      s.delete('k'),
      s.stats(),
    ];
    for (const call of calls) await expect(call).rejects.toSatisfy(isStoreUnavailableError);
    expect(await s.waitFor('k', { timeoutMs: 10_000 })).toBe(false);
    const durable = store({ durable: { replicas: 1, timeoutMs: 10 } });
    await durable.close();
    await expect(
      durable.complete({ key: 'k', token: claim.token, outcome: done, retentionMs: 60_000 }),
    ).rejects.toSatisfy(isStoreUnavailableError);
    expect(client.status).toBe('ready');
  });

  it('a malformed outcome rejects, it never throws', async () => {
    const s = store();
    const broken = { ...done, status: 'teapot' } as unknown as StoredOutcome;
    const settled = s.complete({ key: 'k', token: 1, outcome: broken, retentionMs: 60_000 });
    expect(settled).toBeInstanceOf(Promise);
    await expect(settled).rejects.toBeDefined();
  });
});

describe('RedisStore with isInvalidOptionsError', () => {
  it('the guard recognises the refusals', () => {
    expect(() => new RedisStore({} as RedisStoreOptions)).toThrow(
      expect.objectContaining({ name: 'InvalidOptionsError' }),
    );
    try {
      new RedisStore({} as RedisStoreOptions);
    } catch (error) {
      expect(isInvalidOptionsError(error)).toBe(true);
    }
  });
});

describe('RedisStore waitFor', () => {
  const NEVER_POLL = 600_000;
  const within = (promise: Promise<unknown>, ms: number) =>
    Promise.race([promise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

  it('close wakes every waiter at once with false; a wait after close, or with an aborted signal, is false at once', async () => {
    const s = store({ pollIntervalMs: NEVER_POLL });
    const claim = await s.begin({ key: 'k', fingerprint: 'f', ...lease });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await s.begin({ key: 'j', fingerprint: 'f', ...lease });
    const aborted = new AbortController();
    aborted.abort();
    const started = Date.now();
    expect(await s.waitFor('k', { timeoutMs: 10_000, signal: aborted.signal })).toBe(false);
    const waiters = [s.waitFor('k', { timeoutMs: 10_000 }), s.waitFor('j', { timeoutMs: 10_000 })];
    await new Promise((resolve) => setTimeout(resolve, 20));
    await s.close();
    expect(await Promise.all(waiters)).toEqual([false, false]);
    expect(await s.waitFor('k', { timeoutMs: 10_000 })).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a waiter that gives up does not unsubscribe the other waiters of its key', async () => {
    const s = store({ pollIntervalMs: NEVER_POLL });
    const claim = await s.begin({ key: 'k', fingerprint: 'f', ...lease });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    const patient = s.waitFor('k', { timeoutMs: 10_000 });
    expect(await s.waitFor('k', { timeoutMs: 50 })).toBe(false);
    await s.complete({ key: 'k', token: claim.token, outcome: done, retentionMs: 60_000 });
    expect(await within(patient, 2_000)).toBe(true);
    expect(await patient).toBe(true);
    await s.close();
  });

  it("messages on the caller's subscriber for channels of its own wake nobody and break nothing", async () => {
    const subscriber = new Redis(services.redis.url);
    try {
      await subscriber.subscribe(`surface${RUN}-own-channel`);
      const s = store({ subscriber, pollIntervalMs: NEVER_POLL });
      const claim = await s.begin({ key: 'k', fingerprint: 'f', ...lease });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      const waiting = s.waitFor('k', { timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      // The store listens on the caller's subscriber, not on a connection of its own.
      expect(subscriber.listenerCount('message')).toBe(1);
      await admin.publish(`surface${RUN}-own-channel`, 'hello');
      expect(await within(waiting, 100)).toBe(false);
      await s.complete({ key: 'k', token: claim.token, outcome: done, retentionMs: 60_000 });
      expect(await within(waiting, 2_000)).toBe(true);
      await s.close();
      // The caller's connection is left as it was: no listener of the closed store stays on it.
      expect(subscriber.listenerCount('message')).toBe(0);
    } finally {
      subscriber.disconnect();
    }
  });

  it('a wait that ended checks the record no more', async () => {
    const own = new Redis(services.redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    try {
      const s = new RedisStore({ client: own, prefix: prefix(), pollIntervalMs: 20 });
      let checks = 0;
      intercept(own, 'watch', (send) => {
        checks++;
        return send();
      });
      const claim = await s.begin({ key: 'k', fingerprint: 'f', ...lease });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      expect(await s.waitFor('k', { timeoutMs: 100 })).toBe(false);
      // A check started before the deadline reaches the client in the store's next batch, one loop turn later.
      await new Promise((resolve) => setImmediate(resolve));
      const after = checks;
      expect(after).toBeGreaterThan(1);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(checks).toBe(after);
      // A wait aborted before its first check makes none, then or later.
      const aborted = new AbortController();
      const gaveUp = s.waitFor('k', { timeoutMs: 10_000, signal: aborted.signal });
      aborted.abort();
      expect(await gaveUp).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(checks).toBe(after);
      await s.close();
    } finally {
      own.disconnect();
    }
  });
});

describe('RedisStore stats', () => {
  // A database of its own, so that how SCAN splits the keyspace into batches depends on this test alone.
  const STATS_DB = 13;
  let db: Redis;
  beforeAll(async () => {
    db = new Redis(services.redis.url, { db: STATS_DB, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    await new Promise((resolve) => db.once('ready', resolve));
  });
  afterAll(async () => {
    const keys = ownKeys(await db.keys('surface*'));
    if (keys.length > 0) await db.del(...keys);
    db.disconnect();
  });

  it('count every record over several SCAN batches, and say when the limit cut the count short', async () => {
    const p = prefix();
    const s = new RedisStore({ client: db, prefix: p });
    await Promise.all(
      Array.from({ length: 1_200 }, (_, i) => s.begin({ key: `k${i}`, fingerprint: 'f', ...lease })),
    );
    // The bound counts the keys SCAN walks, other tests' included (stats-bound.test.ts): one above the machine's
    // keyspace sees every record, one below the records' own count cannot.
    const all = await new RedisStore({ client: db, prefix: p, statsScanLimit: 10_000_000 }).stats();
    expect(all).toMatchObject({ records: 1_200, inProgress: 1_200, truncated: false });
    const cut = await new RedisStore({ client: db, prefix: p, statsScanLimit: 700 }).stats();
    // SCAN's COUNT is a hint: a call may hand back a few keys more than it asked for.
    expect(cut.truncated).toBe(true);
    expect(cut.records).toBeLessThan(1_200);
  });

  it('count the memory of each record, and only the records of their own ioredis keyPrefix, glob characters and all', async () => {
    const p = prefix();
    const options = { lazyConnect: true, enableOfflineQueue: true };
    const globbed = new Redis(services.redis.url, { ...options, keyPrefix: 'surface[ab]*?\\' });
    const literal = new Redis(services.redis.url, { ...options, keyPrefix: 'surfacea-x\\' });
    try {
      const mine = new RedisStore({ client: globbed, prefix: p });
      await new RedisStore({ client: literal, prefix: p }).begin({
        key: 'other',
        fingerprint: 'f',
        ...lease,
      });
      expect(await mine.stats()).toMatchObject({ records: 0, bytes: 0 });
      await mine.begin({ key: 'one', fingerprint: 'f', ...lease });
      const one = await mine.stats();
      expect(one).toMatchObject({ records: 1, inProgress: 1 });
      expect(one.bytes).toBeGreaterThan(43);
      await mine.begin({ key: 'two', fingerprint: 'f', ...lease });
      const two = await mine.stats();
      expect(two.bytes).toBeGreaterThan(one.bytes ?? 0);
    } finally {
      for (const client of [globbed, literal]) {
        const own = ownKeys(await client.keys('*')).filter((key) =>
          key.startsWith(client.options.keyPrefix!),
        );
        const bare = own.map((key) => key.slice(client.options.keyPrefix!.length));
        if (bare.length > 0) await client.del(...bare);
        client.disconnect();
      }
    }
  });

  it('count released and expired records apart (by the store clock, or Redis TIME), old HASH records too, nothing else', async () => {
    const p = prefix();
    let now = Date.now();
    const s = new RedisStore({ client: db, prefix: p, clock: () => now });
    const released = await s.begin({ key: 'released', fingerprint: 'f', ...lease });
    if (released.kind !== 'acquired') throw new Error(released.kind);
    await s.release({ key: 'released', token: released.token });
    await s.begin({ key: 'expires', fingerprint: 'f', leaseMs: 10, retentionMs: 60_000 });
    // Records of oncely 0.1 (a HASH each: s state, e expiry), and a key under the prefix that is no record.
    await db.hset(`${p}:{old-completed}`, { s: 'c', e: String(now + 120_000) });
    await db.hset(`${p}:{old-expired}`, { s: 'c', e: String(now - 1) });
    await db.set(`${p}:{not-a-record}`, 'hello');
    expect(await s.stats()).toMatchObject({
      records: 3,
      released: 1,
      inProgress: 1,
      completed: 1,
      expired: 1,
    });
    now += 60_000;
    expect(await s.stats()).toMatchObject({
      records: 1,
      inProgress: 0,
      released: 0,
      completed: 1,
      expired: 3,
    });
    // Without a clock the store reads the time from Redis.
    const serverTime = new RedisStore({ client: db, prefix: p });
    await serverTime.begin({ key: 'brief', fingerprint: 'f', leaseMs: 1, retentionMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await serverTime.stats()).expired).toBeGreaterThanOrEqual(2);
  });
});

describe('RedisStore records', () => {
  const many = (count: number, value: string): [string, string][] =>
    Array.from({ length: count }, (_, i) => [`x-h${i}`, value]);
  const complete = async (s: RedisStore, key: string, outcome: StoredOutcome) => {
    const claim = await s.begin({ key, fingerprint: 'f', ...lease });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    expect(await s.complete({ key, token: claim.token, outcome, retentionMs: 60_000 })).toEqual({
      kind: 'ok',
    });
  };

  it('keep every outcome exactly at the size limits of the layout: 255 headers and more, texts of 127 bytes and more', async () => {
    const s = store();
    const outcomes: StoredOutcome[] = [
      { ...done, headers: [...many(254, 'v'.repeat(126)), ['x-empty', '']] },
      { ...done, headers: many(255, 'v'.repeat(127)) },
      {
        ...done,
        status: 0xffff,
        headers: [...many(300, 'ü'.repeat(200)), ['content-type', 'application/json']],
      },
      {
        ...done,
        headers: [
          ['n'.repeat(127), 'gzip'],
          ['n'.repeat(128), 'v'],
        ],
        encoding: 'br',
        storage: 'blob',
      },
    ];
    for (const [i, outcome] of outcomes.entries()) {
      await complete(s, `limits-${i}`, outcome);
      expect((await s.get(`limits-${i}`))?.outcome).toEqual({
        ...outcome,
        body: new Uint8Array(outcome.body),
      });
      expect(await s.begin({ key: `limits-${i}`, fingerprint: 'f', ...lease })).toMatchObject({
        kind: 'replay',
        outcome: { ...outcome, body: new Uint8Array(outcome.body) },
      });
    }
  });

  it('a key that holds something else is corrupt to delete as well, and is left as it is', async () => {
    const s = store();
    await admin.rpush(s.keys.record('a-list'), 'x');
    await expect(s.delete('a-list')).rejects.toSatisfy(isCorruptRecordError);
    expect(await admin.lrange(s.keys.record('a-list'), 0, -1)).toEqual(['x']);
  });

  it('an outcome the layout cannot hold is refused before anything is written', async () => {
    const s = store();
    const claim = await s.begin({ key: 'unwritable', fingerprint: 'f', ...lease });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    for (const outcome of [
      { ...done, status: 0x10000 },
      { ...done, status: -1 },
      { ...done, encoding: 'zstd' },
      { ...done, storage: 'disk' },
    ] as StoredOutcome[]) {
      await expect(
        s.complete({ key: 'unwritable', token: claim.token, outcome, retentionMs: 60_000 }),
      ).rejects.toSatisfy(isInvalidOptionsError);
    }
    expect((await s.get('unwritable'))?.state).toBe('inProgress');
  });

  it('bytes that are not a whole record of this layout are corrupt, never a record', async () => {
    const s = store();
    await complete(s, 'model', { ...done, headers: [['content-type', 'application/json']] });
    const bytes = (await admin.getBuffer(s.keys.record('model')))!;
    const record = decodeRecord('model', bytes);
    expect(record).toMatchObject({ state: 'completed', fingerprint: 'f' });
    expect(decodeReplay(bytes).outcome).toEqual(record.outcome);
    expect(peekHeader(bytes)).toEqual({ state: 'completed', expiresAt: record.expiresAt });
    const edit = (at: number, ...values: number[]) => {
      const copy = Buffer.from(bytes);
      for (const [i, value] of values.entries()) copy[at + i] = value;
      return copy;
    };
    // Layout 4: the header, then the fingerprint region (a tag byte, 1, and 'f').
    const fingerprintEnd = COMPACT + 2;
    const inProgress = edit(1, 0x70);
    // The header alone, with an empty fingerprint (tag 0), is a whole in-progress record.
    const bare = Buffer.concat([bytes.subarray(0, COMPACT), Buffer.from([0])]);
    bare[1] = 0x70;
    expect(decodeRecord('bare', bare)).toMatchObject({ state: 'inProgress', fingerprint: '' });
    expect(peekHeader(bare)).toMatchObject({ state: 'inProgress' });
    const corrupt: [string, unknown][] = [
      ['not bytes', bytes.toString('latin1')],
      ['bytes, but not as the driver hands them over', new Uint8Array(bytes)],
      ['shorter than the header and its tag', bytes.subarray(0, COMPACT)],
      ['the layout byte and little else', bytes.subarray(0, 3)],
      ['another layout', edit(0, 1)],
      ['a layout to come', edit(0, 8)],
      [
        'a fingerprint longer than the record',
        edit(1, 0x70)
          .fill(100, COMPACT, COMPACT + 1)
          .subarray(0, fingerprintEnd),
      ],
      ['a long fingerprint, which layout 4 cannot tag', edit(COMPACT, 127)],
      ['an unknown state', edit(1, 0x78)],
      ['an outcome cut short', bytes.subarray(0, fingerprintEnd + 3)],
      ['an unknown encoding', edit(fingerprintEnd + 2, 0x03)],
      ['an unknown storage', edit(fingerprintEnd + 2, 0x30)],
      ['an unknown header table entry', edit(fingerprintEnd + 4, 0x7f)],
      [
        'a header count cut short',
        Buffer.concat([bytes.subarray(0, fingerprintEnd + 3), Buffer.from([0xff, 0, 0])]),
      ],
      [
        'a long text cut short',
        Buffer.concat([bytes.subarray(0, fingerprintEnd + 3), Buffer.from([1, 0xff, 0, 0, 1])]),
      ],
    ];
    for (const [what, value] of corrupt) {
      expect(() => decodeRecord('k', value), what).toThrow(
        expect.objectContaining({ name: 'CorruptRecordError' }),
      );
    }
    expect(() => decodeReplay(inProgress)).toThrow(expect.objectContaining({ name: 'CorruptRecordError' }));
    expect(peekHeader(bytes.subarray(0, COMPACT - 1))).toBeUndefined();
    expect(peekHeader(edit(0, 1))).toBeUndefined();
    expect(peekHeader(edit(1, 0x78))).toBeUndefined();
  });
});
