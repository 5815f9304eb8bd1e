import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import {
  isCorruptRecordError,
  isInvalidOptionsError,
  isStoreUnavailableError,
} from '../../src/core/errors.js';
import type { StoredOutcome } from '../../src/core/store.js';
import { RedisStore, type RedisStoreOptions } from '../../src/stores/redis/index.js';
import { COMPACT } from '../../src/stores/redis/record-header.js';
import { commandNames } from '../../src/stores/redis/scripts.js';
import { useDisposableRedis } from './support/disposable.js';

// Behaviour the contract suite cannot see: the key layout, TTLs, raw bytes, Redis TIME, pub/sub, stats, WAIT.
const redis = useDisposableRedis();

const lease = { leaseMs: 10_000, retentionMs: 60_000 };
const store = (options: Partial<RedisStoreOptions> = {}) =>
  new RedisStore({ client: redis.client, prefix: `t${randomUUID().slice(0, 8)}`, ...options });
const outcome = (body: Uint8Array): StoredOutcome => ({
  status: 200,
  headers: [['content-type', 'application/octet-stream']],
  body,
  encoding: 'identity',
  storage: 'inline',
});

async function serverNow(): Promise<number> {
  const [seconds, micros] = await redis.admin.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe('RedisStore options', () => {
  it('are checked at construction with a clear message', () => {
    const bad: unknown[] = [
      undefined,
      {},
      { client: {} },
      { client: redis.client, prefix: '' },
      { client: redis.client, prefix: '{tenant}' },
      { client: redis.client, prefx: 'x' },
      { client: redis.client, clock: 5 },
      { client: redis.client, durable: { replicas: 0, timeoutMs: 10 } },
      { client: redis.client, durable: { replicas: 1 } },
      { client: redis.client, connectWaitMs: -1 },
      { client: redis.client, pollIntervalMs: 0 },
    ];
    for (const options of bad) {
      assert.throws(
        () => new RedisStore(options as RedisStoreOptions),
        isInvalidOptionsError,
        JSON.stringify(options),
      );
    }
  });
});

describe('RedisStore records', () => {
  it('on a standalone client, defines no command and sends EVALSHA, EVAL once the server lacks the script', async () => {
    const own = new Redis({ port: redis.server.port, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    try {
      const s = store({ client: own });
      assert.equal((own as unknown as Record<string, unknown>)[commandNames.begin], undefined);
      await redis.admin.script('FLUSH');
      await redis.admin.config('RESETSTAT');
      assert.equal((await s.begin({ key: 'k', fingerprint: 'f', ...lease })).kind, 'acquired');
      assert.equal((await s.begin({ key: 'k', fingerprint: 'f', ...lease })).kind, 'inProgress');
      const stats = await redis.admin.info('commandstats');
      const calls = (command: string) =>
        Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
      // The first EVALSHA met NOSCRIPT, EVAL ran and loaded the script, the second call was an EVALSHA.
      assert.deepEqual({ evalsha: calls('evalsha'), eval: calls('eval') }, { evalsha: 2, eval: 1 });
    } finally {
      own.disconnect();
    }
  });

  it('live in one STRING (layout 4) at <prefix>:{<key>} and carry a TTL after every transition', async () => {
    const s = store();
    const key = randomUUID();
    const recordKey = `${s.keys.prefix}:{${key}}`;
    assert.equal(s.keys.record(key), recordKey);
    const ttl = async () => redis.admin.pttl(recordKey);

    const first = await s.begin({ key, fingerprint: 'f', leaseMs: 50, retentionMs: 60_000 });
    assert.ok(first.kind === 'acquired');
    assert.equal(await redis.admin.type(recordKey), 'string');
    assert.equal((await redis.admin.getBuffer(recordKey))?.[0], 4, 'layout byte');
    assert.deepEqual(
      (await redis.admin.keys(`${s.keys.prefix}*`)).sort(),
      [recordKey],
      'one key per record, nothing else',
    );
    assert.ok((await ttl()) > 0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const second = await s.begin({ key, fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 });
    assert.ok(second.kind === 'acquired' && second.takeover);
    assert.ok((await ttl()) > 0);
    assert.deepEqual(await s.renew({ key, token: second.token, leaseMs: 10_000 }), { kind: 'ok' });
    assert.ok((await ttl()) > 0);
    assert.deepEqual(await s.release({ key, token: second.token }), { kind: 'ok' });
    assert.ok((await ttl()) > 0);
    const third = await s.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(third.kind === 'acquired');
    await s.complete({ key, token: third.token, outcome: outcome(new Uint8Array([1])), retentionMs: 5_000 });
    const completedTtl = await ttl();
    assert.ok(
      completedTtl > 0 && completedTtl <= 5_000,
      `the retention of the completion is the TTL (${completedTtl})`,
    );
  });

  it('keep a TTL that covers the logical end: kept by a complete within the claim, set anew otherwise', async () => {
    const s = store();
    const ttl = (key: string) => redis.admin.pttl(s.keys.record(key));
    const claim = async (key: string) => {
      const r = await s.begin({ key, fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 });
      assert.ok(r.kind === 'acquired');
      return r.token;
    };
    const done = (key: string, token: number, retentionMs: number) =>
      s.complete({ key, token, outcome: outcome(new Uint8Array(1)), retentionMs });
    // The claim's TTL is its retention plus its lease.
    const same = randomUUID();
    const token = await claim(same);
    const claimed = await ttl(same);
    assert.ok(claimed > 60_000 && claimed <= 70_000, `claim TTL ${claimed}`);
    // The same retention, within the lease: the TTL is left as it is (and still covers the new end).
    await done(same, token, 60_000);
    const kept = await ttl(same);
    assert.ok(kept > 60_000 && kept <= claimed, `kept TTL ${kept}`);
    // A longer retention than the claim's TTL: a TTL of its own, covering it.
    const longer = randomUUID();
    await done(longer, await claim(longer), 120_000);
    const extended = await ttl(longer);
    assert.ok(extended > 110_000 && extended <= 120_000, `extended TTL ${extended}`);
  });

  it('take at most twice a 200-byte body in memory, with the SHA-256 fingerprint every entry point makes', async () => {
    // MEMORY USAGE of a completed record without a label: a 43-character SHA-256 fingerprint (its first 16
    // characters kept), content-type JSON. 360 B on Redis 7.0 with jemalloc: the value, 252 bytes, fits the
    // 256-byte allocation class. One byte more (layout 2's header or fingerprint, a value left with room to grow by
    // APPEND) takes the 320-byte class: 424 B, and fails this; a HASH (0.1) 1,152 B.
    const s = store();
    const key = randomUUID();
    const fingerprint = createHash('sha256').update('POST /payments {"amount":1}').digest('base64url');
    const first = await s.begin({ key, fingerprint, ...lease });
    assert.ok(first.kind === 'acquired');
    const json: StoredOutcome = {
      status: 201,
      headers: [['content-type', 'application/json']],
      body: Buffer.alloc(200, 0x61),
      encoding: 'identity',
      storage: 'inline',
    };
    await s.complete({ key, token: first.token, outcome: json, retentionMs: 60_000 });
    const usage = Number(await redis.admin.memory('USAGE', s.keys.record(key), 'SAMPLES', '0'));
    assert.ok(usage <= 400, `MEMORY USAGE ${usage} B`);
    // And the request it was made for still replays it; another one under the key is a mismatch.
    const replay = await s.begin({ key, fingerprint, ...lease });
    assert.equal(replay.kind, 'replay');
    const other = createHash('sha256').update('POST /payments {"amount":2}').digest('base64url');
    assert.equal((await s.begin({ key, fingerprint: other, ...lease })).kind, 'mismatch');
  });

  it('store body bytes raw (no base64, no JSON) and give them back byte for byte', async () => {
    const s = store();
    const key = randomUUID();
    const body = Buffer.from([0, 255, 254, 0xc3, 0x28, 10, 13, 0, 1, 2, 0x80]); // NULs and invalid UTF-8
    const first = await s.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(first.kind === 'acquired');
    await s.complete({
      key,
      token: first.token,
      outcome: { ...outcome(body), encoding: 'br' },
      retentionMs: 60_000,
    });
    const stored = await redis.admin.getBuffer(s.keys.record(key));
    assert.deepEqual(
      stored?.subarray(stored.length - body.length),
      body,
      'the record ends with the body as it is',
    );
    const replay = await s.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(replay.kind === 'replay');
    assert.deepEqual(Buffer.from(replay.outcome.body), body);
    assert.equal(replay.outcome.encoding, 'br');
  });

  it('take their time from Redis TIME when no clock is given', async () => {
    const s = store();
    const key = randomUUID();
    const before = await serverNow();
    const first = await s.begin({ key, fingerprint: 'f', ...lease });
    const after = await serverNow();
    assert.ok(first.kind === 'acquired');
    assert.ok(first.token >= before && first.token <= after, 'the first token is the server time');
    const record = await s.get(key);
    assert.ok(
      record && record.leaseUntil >= before + lease.leaseMs && record.leaseUntil <= after + lease.leaseMs,
    );
  });

  it('read the server time off the key TTL when the key holds a record, TIME otherwise (no TTL included)', async () => {
    const s = store();
    for (const persist of [false, true]) {
      const key = randomUUID();
      const first = await s.begin({ key, fingerprint: 'f', leaseMs: 300, retentionMs: 60_000 });
      assert.ok(first.kind === 'acquired');
      if (persist) await redis.admin.persist(s.keys.record(key));
      const duplicate = await s.begin({ key, fingerprint: 'f', leaseMs: 300, retentionMs: 60_000 });
      assert.ok(duplicate.kind === 'inProgress');
      assert.ok(
        duplicate.retryAfterMs > 200 && duplicate.retryAfterMs <= 300,
        `${duplicate.retryAfterMs} ms left`,
      );
      await new Promise((resolve) => setTimeout(resolve, 320));
      const before = await serverNow();
      const takeover = await s.begin({ key, fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 });
      const after = await serverNow();
      assert.ok(takeover.kind === 'acquired' && takeover.takeover, `takeover (persist: ${persist})`);
      // The token follows the time the script decided by: the server's, to the millisecond it may straddle.
      assert.ok(
        takeover.token >= before - 1 && takeover.token <= after + 1,
        `token ${takeover.token} within [${before}, ${after}] (persist: ${persist})`,
      );
      const record = await s.get(key);
      assert.ok(record && Math.abs(record.leaseUntil - (takeover.token + 10_000)) <= 1);
    }
  });

  it('a key holding something else is reported corrupt, never replayed', async () => {
    const s = store();
    const notOurs = randomUUID();
    await redis.admin.set(s.keys.record(notOurs), 'not a record');
    await assert.rejects(s.begin({ key: notOurs, fingerprint: 'f', ...lease }), isCorruptRecordError);
    const halfWritten = randomUUID();
    await redis.admin.hset(s.keys.record(halfWritten), 's', 'c', 'e', String(Date.now() + 60_000));
    await assert.rejects(s.begin({ key: halfWritten, fingerprint: 'f', ...lease }), isCorruptRecordError);
    // A record cut short inside its fingerprint, and one whose outcome is cut short.
    const good = randomUUID();
    const first = await s.begin({ key: good, fingerprint: 'a-fingerprint', ...lease });
    assert.ok(first.kind === 'acquired');
    await s.complete({
      key: good,
      token: first.token,
      outcome: outcome(new Uint8Array(8)),
      retentionMs: 60_000,
    });
    const bytes = (await redis.admin.getBuffer(s.keys.record(good)))!;
    const cut = randomUUID();
    await redis.admin.set(s.keys.record(cut), bytes.subarray(0, COMPACT + 5), 'PX', 60_000);
    await assert.rejects(s.begin({ key: cut, fingerprint: 'a-fingerprint', ...lease }), isCorruptRecordError);
    await assert.rejects(s.get(cut), isCorruptRecordError);
    const noOutcome = randomUUID();
    await redis.admin.set(s.keys.record(noOutcome), bytes.subarray(0, COMPACT + 1 + 13 + 2), 'PX', 60_000);
    await assert.rejects(
      s.begin({ key: noOutcome, fingerprint: 'a-fingerprint', ...lease }),
      isCorruptRecordError,
    );
    // An in-progress record with bytes after its fingerprint: complete refuses to append an outcome to it.
    const trailing = randomUUID();
    const claim = await s.begin({ key: trailing, fingerprint: 'a-fingerprint', ...lease });
    assert.ok(claim.kind === 'acquired');
    await redis.admin.append(s.keys.record(trailing), 'junk');
    await assert.rejects(
      s.complete({
        key: trailing,
        token: claim.token,
        outcome: outcome(new Uint8Array(1)),
        retentionMs: 60_000,
      }),
      isCorruptRecordError,
    );
  });

  it('publish a completion notice only when a waiter registered on the record', async () => {
    const s = store({ pollIntervalMs: 600_000 });
    const listener = redis.admin.duplicate();
    const notices: string[] = [];
    listener.on('pmessage', (_pattern, channel: string) => notices.push(channel));
    await listener.psubscribe(`${s.keys.prefix}:settled:*`);
    try {
      const [quiet, awaited] = [randomUUID(), randomUUID()];
      const claims = new Map<string, number>();
      for (const key of [quiet, awaited]) {
        const r = await s.begin({ key, fingerprint: 'f', ...lease });
        assert.ok(r.kind === 'acquired');
        claims.set(key, r.token);
      }
      const waiting = s.waitFor(awaited, { timeoutMs: 30_000 });
      // The waiter's mark: the top bit of layout 4's state byte.
      for (let i = 0; i < 100 && (await redis.admin.getBuffer(s.keys.record(awaited)))?.[1] !== 0xf0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      for (const key of [quiet, awaited]) {
        const done = {
          key,
          token: claims.get(key)!,
          outcome: outcome(new Uint8Array(1)),
          retentionMs: 60_000,
        };
        assert.deepEqual(await s.complete(done), { kind: 'ok' });
      }
      assert.equal(await waiting, true);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(notices, [s.keys.channel(awaited)], 'one notice, for the key a waiter registered on');
    } finally {
      listener.disconnect();
      await s.close();
    }
  });

  it('a delete in the millisecond of the claim leaves a short-lived tombstone that keeps the token', async () => {
    let now = Date.now();
    const s = store({ clock: () => now });
    const key = randomUUID();
    const first = await s.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(first.kind === 'acquired');
    assert.equal(await s.delete(key), true);
    const tomb = (await redis.admin.getBuffer(s.keys.record(key)))!;
    assert.equal(String.fromCharCode(tomb[1]!), 'r', 'released');
    assert.equal(tomb.readUIntBE(4, 6), first.token, 'the token is kept');
    assert.equal(first.token + tomb.readInt32BE(18), now, 'it ends now: gone for every script');
    assert.deepEqual([...tomb.subarray(COMPACT)], [0], 'an empty fingerprint, no label, no outcome');
    const ttl = await redis.admin.pttl(s.keys.record(key));
    assert.ok(ttl > 0 && ttl <= 1_000, `a short TTL (${ttl} ms)`);
    assert.equal(await s.get(key), undefined);
    // Tokens more than the 1 s floor ahead of the clock (1,200 claims in one millisecond): the tombstone's TTL
    // still runs until the clock passes the token.
    const busy = randomUUID();
    let last = 0;
    for (let i = 0; i < 1_200; i++) {
      const r = await s.begin({ key: busy, fingerprint: 'f', ...lease });
      assert.ok(r.kind === 'acquired');
      last = r.token;
      await s.release({ key: busy, token: r.token });
    }
    assert.equal(last, now + 1_199);
    assert.equal(await s.delete(busy), true);
    const busyTtl = await redis.admin.pttl(s.keys.record(busy));
    assert.ok(busyTtl > 1_150 && busyTtl <= 1_200, `TTL to the token (${busyTtl} ms)`);
    // Once the clock has passed the token, a delete removes the key outright.
    now += 1;
    const second = await s.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(second.kind === 'acquired' && second.token === first.token + 1);
    now += 1;
    assert.equal(await s.delete(key), true);
    assert.equal(await redis.admin.exists(s.keys.record(key)), 0);
  });

  it('work through a redis.client with a keyPrefix, stats included', async () => {
    const prefixed = new Redis({ port: redis.server.port, host: '127.0.0.1', keyPrefix: 'app:' });
    try {
      const s = new RedisStore({ client: prefixed, prefix: `t${randomUUID().slice(0, 8)}` });
      const first = await s.begin({ key: 'k', fingerprint: 'f', ...lease });
      assert.ok(first.kind === 'acquired');
      assert.equal(await redis.admin.exists(`app:${s.keys.record('k')}`), 1);
      assert.equal((await s.stats()).inProgress, 1);
    } finally {
      prefixed.disconnect();
    }
  });
});

describe('RedisStore stats', () => {
  it('counts records by state with a bounded SCAN', async () => {
    const s = store();
    for (let i = 0; i < 5; i++) {
      const r = await s.begin({ key: `k${i}`, fingerprint: 'f', ...lease });
      assert.ok(r.kind === 'acquired');
      if (i < 2)
        await s.complete({
          key: `k${i}`,
          token: r.token,
          outcome: outcome(new Uint8Array(10)),
          retentionMs: 60_000,
        });
      if (i === 2) await s.release({ key: `k${i}`, token: r.token });
    }
    // A bound above the shared Redis' whole keyspace (the bound counts every key walked): exact counts.
    const whole = new RedisStore({ client: redis.client, prefix: s.keys.prefix, statsScanLimit: 10_000_000 });
    const stats = await whole.stats();
    assert.deepEqual(
      { ...stats, bytes: undefined },
      {
        records: 5,
        inProgress: 2,
        completed: 2,
        released: 1,
        expired: 0,
        truncated: false,
        bytes: undefined,
      },
    );
    assert.ok((stats.bytes ?? 0) > 0);
    const bounded = await store({ statsScanLimit: 3 }).stats();
    assert.equal(bounded.records, 0, 'another prefix sees none of these');
    const limited = await new RedisStore({
      client: redis.client,
      prefix: s.keys.prefix,
      statsScanLimit: 3,
    }).stats();
    // Three keys asked for, oncely's or other tests' (COUNT is a hint: a few more may come): fewer than all five
    // records, and the walk says it stopped short.
    assert.ok(limited.records < 5);
    assert.equal(limited.truncated, true);
  });
});

describe('RedisStore durable', () => {
  it('reports a WAIT shortfall instead of hiding it, with the record kept on the primary', async () => {
    const s = store({ durable: { replicas: 1, timeoutMs: 20 } });
    const key = randomUUID();
    const first = await s.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(first.kind === 'acquired');
    await assert.rejects(
      s.complete({ key, token: first.token, outcome: outcome(new Uint8Array(1)), retentionMs: 60_000 }),
      // outcomeStored: the engine must neither retry the complete nor release the key, whose record is written.
      (error) =>
        isStoreUnavailableError(error) && error.outcomeStored && /0 of 1 replicas/.test(error.message),
    );
    assert.equal((await s.get(key))?.state, 'completed');
    // A fenced complete has nothing to confirm.
    assert.deepEqual(
      await s.complete({ key, token: first.token, outcome: outcome(new Uint8Array(1)), retentionMs: 60_000 }),
      { kind: 'fenced' },
    );
  });
});
