/**
 * @module The record layouts in Redis, where the contract suite cannot see them: layout 4 (what this version writes),
 * layout 6 (the same fields at layout 2's widths, for numbers layout 4 cannot hold), and records of layouts 2 and 3
 * written by the version before layout 4 (its own scripts, kept in fixtures/layout-2) met by this one.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { StoredOutcome } from '../../src/core/store.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { encodeLabel, encodeOutcome } from '../../src/stores/redis/record.js';
import { COMPACT } from '../../src/stores/redis/record-header.js';
import { FakeClock } from '../../src/testing/index.js';
import { requireService, services } from '../support/services.js';

const LEASE = 10_000;
const RETENTION = 60_000;
const DAY = 86_400_000;
const lease = { leaseMs: LEASE, retentionMs: RETENTION };
const outcome: StoredOutcome = {
  status: 201,
  headers: [['content-type', 'application/json']],
  body: Buffer.from('{"id":"pay_7","amount":1200}'),
  encoding: 'identity',
  storage: 'inline',
};
/** A fingerprint as every entry point makes it: SHA-256, base64url, 43 characters. */
const sha = (text: string) => createHash('sha256').update(text).digest('base64url');
const lua = (name: string) =>
  readFileSync(new URL(`./fixtures/layout-2/${name}.lua`, import.meta.url), 'utf8');
const PREVIOUS = { begin: lua('begin-1'), complete: lua('complete-1') };

let admin: Redis;
beforeAll(async () => {
  await requireService('redis');
  admin = new Redis(services.redis.url);
});
afterAll(async () => {
  await admin.quit();
});

function setup() {
  const clock = new FakeClock();
  const store = new RedisStore({ client: admin, prefix: `lay${randomUUID().slice(0, 8)}`, clock: clock.now });
  const raw = async (key: string) => (await admin.getBuffer(store.keys.record(key)))!;
  const run = (script: string, key: string, ...args: (string | number | Buffer)[]) =>
    admin.callBuffer('eval', script, 1, store.keys.record(key), ...args);
  // An instance of the version before layout 4: its scripts, on the same Redis, prefix and (fake) clock.
  const previous = {
    async begin(key: string, fingerprint: string, label?: string): Promise<number> {
      const args = [fingerprint, LEASE, RETENTION, clock.now(), ...(label ? [encodeLabel(label)] : [])];
      const reply = await run(PREVIOUS.begin, key, ...args);
      assert.equal(typeof reply, 'number', 'the previous version claimed the key');
      return reply as number;
    },
    complete: (key: string, token: number) =>
      run(PREVIOUS.complete, key, token, RETENTION, clock.now(), '', encodeOutcome(outcome)),
  };
  return { clock, store, raw, previous };
}

describe('Records of the version before layout 4 (layouts 2 and 3), met by this one', () => {
  it('a completed one replays byte for byte to the request that made it; another request is a mismatch', async () => {
    const { store, raw, previous } = setup();
    for (const [fingerprint, other] of [
      [sha('a'), sha('b')],
      ['order-7', 'order-8'],
    ] as const) {
      for (const label of [undefined, 'POST /payments']) {
        const key = randomUUID();
        await previous.complete(key, await previous.begin(key, fingerprint, label));
        const before = await raw(key);
        assert.equal(before[0], label ? 3 : 2);
        const replay = await store.begin({ key, fingerprint, ...lease });
        assert.ok(replay.kind === 'replay', `${fingerprint} ${label}: ${replay.kind}`);
        assert.deepEqual(Buffer.from(replay.outcome.body), Buffer.from(outcome.body));
        assert.deepEqual(replay.outcome.headers, outcome.headers);
        assert.equal((await store.begin({ key, fingerprint: other, ...lease })).kind, 'mismatch');
        const record = await store.get(key);
        assert.equal(record?.fingerprint, fingerprint, 'shown whole, as it was kept');
        assert.equal(record?.label, label);
        assert.deepEqual(await raw(key), before, 'no read rewrites it');
      }
    }
    assert.equal((await store.stats()).completed, 4);
  });

  it('one in progress is busy, then taken over in layout 4 (label and creation kept), and fences its owner', async () => {
    const { clock, store, raw, previous } = setup();
    const key = randomUUID();
    const fingerprint = sha('a');
    const created = clock.now();
    const owner = await previous.begin(key, fingerprint, 'POST /payments');
    const busy = await store.begin({ key, fingerprint, ...lease });
    assert.ok(busy.kind === 'inProgress' && busy.attempt === 1);
    assert.equal((await store.begin({ key, fingerprint: sha('b'), ...lease })).kind, 'mismatch');
    clock.advance(LEASE + 1);
    const takeover = await store.begin({ key, fingerprint, ...lease });
    assert.ok(takeover.kind === 'acquired' && takeover.takeover && takeover.attempt === 2);
    const bytes = await raw(key);
    assert.equal(bytes[0], 5, 'layout 5: layout 4 with the label it had');
    assert.deepEqual(
      [...bytes.subarray(COMPACT, COMPACT + 17)],
      [126, ...Buffer.from(fingerprint.slice(0, 16))],
    );
    const record = await store.get(key);
    assert.equal(record?.label, 'POST /payments');
    assert.equal(record?.createdAt, created);
    assert.equal(record?.fingerprint, `${fingerprint.slice(0, 16)}…`);
    // The previous version's scripts refuse a layout 4 record: its owner's late complete writes nothing.
    assert.ok(Array.isArray(await previous.complete(key, owner)), 'refused as not a record of its layout');
    assert.deepEqual(await store.complete({ key, token: takeover.token, outcome, retentionMs: RETENTION }), {
      kind: 'ok',
    });
    const replay = await store.begin({ key, fingerprint, ...lease });
    assert.ok(replay.kind === 'replay');
    assert.deepEqual(Buffer.from(replay.outcome.body), Buffer.from(outcome.body));
  });

  it('a claim it made is completed by this version in its own layout', async () => {
    const { store, raw, previous } = setup();
    const key = randomUUID();
    const fingerprint = sha('a');
    const token = await previous.begin(key, fingerprint);
    assert.deepEqual(await store.complete({ key, token, outcome, retentionMs: RETENTION }), { kind: 'ok' });
    assert.equal((await raw(key))[0], 2);
    const replay = await store.begin({ key, fingerprint, ...lease });
    assert.ok(replay.kind === 'replay');
    assert.deepEqual(Buffer.from(replay.outcome.body), Buffer.from(outcome.body));
  });
});

describe('Layout 4, and layout 6 for what it cannot hold', () => {
  it('keeps a SHA-256 fingerprint by its first 16 characters, any other whole', async () => {
    const { store, raw } = setup();
    const key = randomUUID();
    const fingerprint = sha('a');
    await store.begin({ key, fingerprint, ...lease });
    assert.equal((await raw(key)).length, COMPACT + 17);
    assert.equal((await store.get(key))?.fingerprint, `${fingerprint.slice(0, 16)}…`);
    // The same 16 characters with another ending are the same request: 96 bits tell requests apart.
    const near = `${fingerprint.slice(0, 16)}${sha('b').slice(16)}`;
    assert.equal((await store.begin({ key, fingerprint: near, ...lease })).kind, 'inProgress');
    // Not the 43 characters of a SHA-256 (one too many, or a last character with bits a digest never has): whole.
    for (const text of [`${fingerprint}A`, `${fingerprint.slice(0, 42)}B`, fingerprint.slice(0, 16)]) {
      const other = randomUUID();
      await store.begin({ key: other, fingerprint: text, ...lease });
      assert.equal((await store.get(other))?.fingerprint, text);
      assert.equal((await store.begin({ key: other, fingerprint, ...lease })).kind, 'mismatch');
    }
  });

  it('writes layout 6 when a time, the keep or the fingerprint does not fit layout 4, and reads it back', async () => {
    const { clock, store, raw } = setup();
    const now = clock.now();
    const cases = [
      { what: 'a retention of 30 days', fingerprint: sha('a'), leaseMs: LEASE, retentionMs: 30 * DAY },
      { what: 'a lease of 5 hours', fingerprint: sha('a'), leaseMs: 5 * 3_600_000, retentionMs: RETENTION },
      {
        what: 'a fingerprint of 200 bytes',
        fingerprint: 'f'.repeat(200),
        leaseMs: LEASE,
        retentionMs: RETENTION,
      },
    ];
    for (const { what, fingerprint, leaseMs, retentionMs } of cases) {
      const key = randomUUID();
      const claim = await store.begin({ key, fingerprint, leaseMs, retentionMs, label: 'POST /x' });
      assert.ok(claim.kind === 'acquired', what);
      assert.equal((await raw(key))[0], 7, `${what}: layout 7 (layout 6 with a label)`);
      assert.deepEqual(
        await store.get(key),
        {
          key,
          state: 'inProgress',
          fingerprint: fingerprint.length === 43 ? `${fingerprint.slice(0, 16)}…` : fingerprint,
          token: claim.token,
          attempt: 1,
          leaseUntil: now + leaseMs,
          createdAt: now,
          completedAt: undefined,
          expiresAt: now + retentionMs,
          outcome: undefined,
          label: 'POST /x',
        },
        what,
      );
      assert.equal((await store.begin({ key, fingerprint: 'other', leaseMs, retentionMs })).kind, 'mismatch');
      await store.complete({ key, token: claim.token, outcome, retentionMs });
      const replay = await store.begin({ key, fingerprint, leaseMs, retentionMs });
      assert.ok(replay.kind === 'replay', what);
      assert.equal(replay.completedAt, now);
      assert.equal((await store.get(key))?.expiresAt, now + retentionMs, what);
    }
  });

  it('a renewal past what layout 4 holds moves the record to layout 6, its TTL kept', async () => {
    const { clock, store, raw } = setup();
    const key = randomUUID();
    const claim = await store.begin({ key, fingerprint: sha('a'), leaseMs: 1_000, retentionMs: 20 * DAY });
    assert.ok(claim.kind === 'acquired');
    assert.equal((await raw(key))[0], 4);
    const ttl = await admin.pttl(store.keys.record(key));
    clock.advance(500);
    assert.deepEqual(await store.renew({ key, token: claim.token, leaseMs: 25 * DAY }), { kind: 'ok' });
    assert.equal((await raw(key))[0], 6);
    assert.equal((await store.get(key))?.leaseUntil, clock.now() + 25 * DAY);
    assert.ok((await admin.pttl(store.keys.record(key))) <= ttl, 'the TTL was kept');
    assert.deepEqual(await store.complete({ key, token: claim.token, outcome, retentionMs: RETENTION }), {
      kind: 'ok',
    });
    assert.equal((await store.get(key))?.state, 'completed');
  });

  it("keeps the waiter's mark in the state byte, through a release", async () => {
    const { store, raw } = setup();
    const key = randomUUID();
    const claim = await store.begin({ key, fingerprint: 'f', ...lease });
    assert.ok(claim.kind === 'acquired');
    const waiting = store.waitFor(key, { timeoutMs: 5_000 });
    for (let i = 0; i < 200 && (await raw(key))[1] !== 0xf0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal((await raw(key))[1], 0xf0, "'p' and the mark");
    assert.deepEqual(await store.release({ key, token: claim.token }), { kind: 'ok' });
    assert.equal((await raw(key))[1], 0xf2, "'r' and the mark");
    assert.equal(await waiting, true);
    assert.equal((await store.get(key))?.state, 'released');
    await store.close();
  });
});
