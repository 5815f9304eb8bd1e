import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'vitest';
import type { StoredOutcome } from '../../src/core/store.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { useDisposableRedis } from './support/disposable.js';

// Records written by oncely 0.1 (a HASH per key, by 0.1's own scripts in fixtures/oncely-0.1) met by this
// version (a STRING per key): the rule of docs/stores/redis.md, "Upgrading from 0.1".
const redis = useDisposableRedis();

const lua = (name: string) =>
  readFileSync(new URL(`./fixtures/oncely-0.1/${name}.lua`, import.meta.url), 'utf8');
const OLD = { begin: lua('begin-1'), complete: lua('complete-1'), release: lua('release-1') };

const LEASE = 10_000;
const RETENTION = 60_000;
const lease = { leaseMs: LEASE, retentionMs: RETENTION };
const outcome: StoredOutcome = {
  status: 201,
  headers: [
    ['content-type', 'application/json'],
    ['link', '</a>'],
    ['link', '</b>'],
    ['x-long', 'v'.repeat(300)],
  ],
  body: Buffer.from([0, 255, 0x7b, 0x7d, 0xc3, 0x28, 10]),
  encoding: 'br',
  storage: 'inline',
};

/** A 0.1 instance: its scripts, on the same Redis, the same prefix and the same (fake) clock. */
function oldInstance(store: RedisStore, clock: FakeClock) {
  const run = (script: string, key: string, ...args: (string | number | Buffer)[]) =>
    redis.admin.eval(script, 1, store.keys.record(key), ...args) as Promise<unknown>;
  return {
    async begin(key: string, fingerprint: string): Promise<number> {
      const reply = (await run(OLD.begin, key, fingerprint, LEASE, RETENTION, clock.now())) as number[];
      assert.equal(reply[0], 1, 'the 0.1 begin acquired');
      return reply[1]!;
    },
    complete: (key: string, token: number) =>
      run(
        OLD.complete,
        key,
        token,
        RETENTION,
        clock.now(),
        store.keys.channel(key),
        outcome.status,
        JSON.stringify(outcome.headers),
        Buffer.from(outcome.body),
        outcome.encoding,
        outcome.storage,
      ),
    release: (key: string, token: number) =>
      run(OLD.release, key, token, clock.now(), store.keys.channel(key)),
  };
}

function setup() {
  const clock = new FakeClock();
  const store = new RedisStore({
    client: redis.client,
    prefix: `u${randomUUID().slice(0, 8)}`,
    clock: clock.now,
  });
  const type = (key: string) => redis.admin.type(store.keys.record(key));
  return { clock, store, old: oldInstance(store, clock), type, key: randomUUID() };
}

describe('Upgrading from 0.1: a 0.1 HASH record met by this version', () => {
  it('completed: replayed byte for byte until its retention ends, left a HASH by every read', async () => {
    const { clock, store, old, type, key } = setup();
    const token = await old.begin(key, 'f');
    clock.advance(5);
    assert.deepEqual(await old.complete(key, token), [5]);
    const completedAt = clock.now();
    clock.advance(LEASE * 2);

    const replay = await store.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(replay.kind === 'replay', `expected replay, got ${replay.kind}`);
    assert.equal(replay.completedAt, completedAt);
    assert.equal(replay.outcome.status, 201);
    assert.deepEqual(
      replay.outcome.headers.map(([n, v]) => [n, v]),
      outcome.headers.map(([n, v]) => [n, v]),
    );
    assert.deepEqual(Buffer.from(replay.outcome.body), Buffer.from(outcome.body));
    assert.equal(replay.outcome.encoding, 'br');
    assert.equal(replay.outcome.storage, 'inline');
    assert.deepEqual(await store.begin({ key, fingerprint: 'other', ...lease }), { kind: 'mismatch' });
    const record = await store.get(key);
    assert.equal(record?.state, 'completed');
    assert.equal(record?.token, token);
    assert.equal(record?.expiresAt, completedAt + RETENTION);
    assert.deepEqual(Buffer.from(record?.outcome?.body ?? []), Buffer.from(outcome.body));
    assert.equal((await store.stats()).completed, 1, 'stats counts 0.1 records');
    assert.equal(await type(key), 'hash', 'reads leave a 0.1 record as it is');

    clock.advance(completedAt + RETENTION - clock.now());
    const again = await store.begin({ key, fingerprint: 'f2', ...lease });
    assert.ok(again.kind === 'acquired' && again.token > token && again.attempt === 1);
    assert.equal(await type(key), 'string', 'the claim wrote the key in the new layout');
  });

  it('in progress: a duplicate waits; the 0.1 owner still completes it and this version replays that', async () => {
    const { clock, store, old, key } = setup();
    const token = await old.begin(key, 'f');
    clock.advance(1_000);
    assert.deepEqual(await store.begin({ key, fingerprint: 'f', ...lease }), {
      kind: 'inProgress',
      retryAfterMs: LEASE - 1_000,
      attempt: 1,
    });
    // A waiter of this version is woken by the 0.1 owner's completion (0.1 always publishes).
    const waiting = store.waitFor(key, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(await old.complete(key, token), [5]);
    assert.equal(await waiting, true);
    const replay = await store.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(replay.kind === 'replay');
    assert.deepEqual(Buffer.from(replay.outcome.body), Buffer.from(outcome.body));
    await store.close();
  });

  it('in progress past its lease: taken over with a higher token and rewritten; the 0.1 owner is refused', async () => {
    const { clock, store, old, type, key } = setup();
    const token = await old.begin(key, 'f');
    // A waiter of this version, registered while the key is a 0.1 HASH, and told of no poll: only a notice wakes it.
    const quiet = new RedisStore({
      client: redis.client,
      prefix: store.keys.prefix,
      clock: clock.now,
      pollIntervalMs: 600_000,
    });
    const waiting = quiet.waitFor(key, { timeoutMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    clock.advance(LEASE);
    const takeover = await store.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(takeover.kind === 'acquired', `expected acquired, got ${takeover.kind}`);
    assert.equal(takeover.takeover, true);
    assert.equal(takeover.attempt, 2);
    assert.ok(takeover.token > token);
    assert.equal(await type(key), 'string');
    // The 0.1 owner's complete meets a STRING: its script fails (WRONGTYPE), so nothing is overwritten.
    await assert.rejects(old.complete(key, token), /WRONGTYPE/);
    assert.deepEqual(
      await store.complete({ key, token, outcome, retentionMs: RETENTION }),
      { kind: 'fenced' },
      'nor can its token complete through this version',
    );
    assert.deepEqual(await store.complete({ key, token: takeover.token, outcome, retentionMs: RETENTION }), {
      kind: 'ok',
    });
    assert.equal((await store.begin({ key, fingerprint: 'f', ...lease })).kind, 'replay');
    assert.equal(await waiting, true, 'a 0.1 record counts as waited on, through the takeover');
    await quiet.close();
  });

  it('released: claimed again with a higher token, the attempt counted; deleted like any record', async () => {
    const { store, old, key } = setup();
    const token = await old.begin(key, 'f');
    assert.deepEqual(await old.release(key, token), [5]);
    assert.equal((await store.get(key))?.state, 'released');
    const claim = await store.begin({ key, fingerprint: 'f2', ...lease });
    assert.ok(claim.kind === 'acquired' && claim.token > token && claim.attempt === 2 && !claim.takeover);
    assert.deepEqual(await store.release({ key, token: claim.token }), { kind: 'ok' });

    const other = randomUUID();
    await old.begin(other, 'f');
    assert.equal(await store.delete(other), true);
    assert.equal(await store.get(other), undefined);
  });

  it('a 0.1 HASH missing fields, or a key of another type, is reported corrupt by every script', async () => {
    const { store } = setup();
    const half = randomUUID();
    await redis.admin.hset(store.keys.record(half), 's', 'c', 'e', String(Date.now() + 60_000));
    const list = randomUUID();
    await redis.admin.rpush(store.keys.record(list), 'x');
    for (const key of [half, list]) {
      await assert.rejects(store.begin({ key, fingerprint: 'f', ...lease }), /not an oncely record/);
      await assert.rejects(store.get(key), /not an oncely record/);
      await assert.rejects(store.delete(key), /not an oncely record/);
      await assert.rejects(
        store.complete({ key, token: 1, outcome, retentionMs: RETENTION }),
        /not an oncely record/,
      );
    }
  });
});
