/**
 * @module Record labels in Redis, where the contract suite cannot see, on every client (ioredis, iovalkey,
 * node-redis, GLIDE: the label goes out as UTF-8 words and comes back in the record's bytes): the bytes (a record
 * without a label is layout 4 with nothing after its fingerprint; one with a label is layout 5), records written
 * before labels read and continued, and a bad label refused before it reaches a record.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { isInvalidOptionsError } from '../../src/core/errors.js';
import type { StoredOutcome } from '../../src/core/store.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { COMPACT } from '../../src/stores/redis/record-header.js';
import { FakeClock } from '../../src/testing/index.js';
import { requireService, services } from '../support/services.js';
import { CLIENTS, type ClientName, connectClient, type MadeClient } from './support/clients.js';

const LEASE = 10_000;
const RETENTION = 60_000;
const lease = { leaseMs: LEASE, retentionMs: RETENTION };
const outcome: StoredOutcome = {
  status: 201,
  headers: [['content-type', 'application/json']],
  body: Buffer.from('{"id":7}'),
  encoding: 'identity',
  storage: 'inline',
};

/** Reads and writes the raw bytes; the stores under test are on the client of their describe. */
let admin: Redis;
beforeAll(async () => {
  await requireService('redis');
  admin = new Redis(services.redis.url);
});
afterAll(async () => {
  await admin.quit();
});

function setup(made: MadeClient) {
  const clock = new FakeClock();
  const store = new RedisStore({
    client: made.client,
    prefix: `lbl${randomUUID().slice(0, 8)}`,
    clock: clock.now,
  });
  const raw = (key: string) => admin.getBuffer(store.keys.record(key));
  return { clock, store, raw, key: randomUUID() };
}

/** The 43-byte header of layout 2 (scripts/lib/record.lua), as the versions before layout 4 wrote it. */
function header(fields: {
  layout: number;
  state: string;
  fpLen: number;
  attempt: number;
  token: number;
  leaseUntil: number;
  expiresAt: number;
  createdAt: number;
  keep: number;
}): Buffer {
  const b = Buffer.alloc(43);
  b[0] = fields.layout;
  b[1] = fields.state.charCodeAt(0);
  b.writeUInt16BE(fields.fpLen, 3);
  b.writeUInt32BE(fields.attempt, 5);
  b.writeUIntBE(fields.token, 9, 6);
  b.writeUIntBE(fields.leaseUntil, 15, 6);
  b.writeUIntBE(fields.expiresAt, 21, 6);
  b.writeUIntBE(fields.createdAt, 27, 6);
  b.writeUInt32BE(fields.keep, 39);
  return b;
}

describe.each(CLIENTS)('RedisStore labels on %s', (name: ClientName) => {
  let made: MadeClient;
  beforeAll(async () => {
    made = await connectClient(name, services.redis.port);
  });
  afterAll(async () => {
    await made?.close();
  });

  it('a claim without a label writes layout 4 with nothing after its fingerprint; one with a label, layout 5', async () => {
    const { clock, store, raw, key } = setup(made);
    const now = clock.now();
    const plain = await store.begin({ key, fingerprint: 'fp', ...lease });
    assert.ok(plain.kind === 'acquired');
    const head = Buffer.alloc(COMPACT);
    head[0] = 4;
    head[1] = 'p'.charCodeAt(0);
    head.writeUInt16BE(1, 2); // attempt
    head.writeUIntBE(plain.token, 4, 6);
    head.writeUInt32BE(plain.token - now, 10); // token - created at
    head.writeInt32BE(now + LEASE - plain.token, 14);
    head.writeInt32BE(now + RETENTION - plain.token, 18);
    head.writeUIntBE(LEASE, 26, 3); // keep
    const expected = Buffer.concat([head, Buffer.from([2]), Buffer.from('fp')]);
    assert.deepEqual(await raw(key), expected, 'no byte added for a record without a label');

    const labelled = randomUUID();
    await store.begin({ key: labelled, fingerprint: 'fp', ...lease, label: 'POST /päy' });
    const bytes = (await raw(labelled))!;
    assert.equal(bytes[0], 5, 'layout 5: a record with a label');
    const label = Buffer.from('POST /päy');
    assert.deepEqual(bytes.subarray(COMPACT + 3), Buffer.concat([Buffer.from([0, label.length]), label]));
    assert.equal(
      bytes.length,
      COMPACT + 3 + 2 + label.length,
      'header, fingerprint region, u16 length, the label',
    );
    assert.equal((await store.get(labelled))?.label, 'POST /päy');
  });

  it('a layout 2 record written before labels is read, taken over (in layout 4), completed and replayed without a label', async () => {
    const { clock, store, raw, key } = setup(made);
    const now = clock.now();
    const before = Buffer.concat([
      header({
        layout: 2,
        state: 'p',
        fpLen: 2,
        attempt: 1,
        token: now,
        leaseUntil: now + LEASE,
        expiresAt: now + RETENTION,
        createdAt: now,
        keep: LEASE,
      }),
      Buffer.from('fp'),
    ]);
    await admin.set(store.keys.record(key), before, 'PX', RETENTION + LEASE + 60_000);
    const read = await store.get(key);
    assert.equal(read?.state, 'inProgress');
    assert.equal(read?.label, undefined);
    assert.ok(!('label' in read!), 'no label property at all on a record without one');
    clock.advance(LEASE + 1);
    const takeover = await store.begin({ key, fingerprint: 'fp', ...lease, label: 'POST /late' });
    assert.ok(takeover.kind === 'acquired' && takeover.takeover && takeover.attempt === 2);
    assert.equal((await raw(key))![0], 4, 'the record continued in layout 4: still no label');
    await store.complete({ key, token: takeover.token, outcome, retentionMs: RETENTION });
    const replay = await store.begin({ key, fingerprint: 'fp', ...lease, label: 'POST /late' });
    assert.ok(replay.kind === 'replay');
    assert.equal(Buffer.from(replay.outcome.body).toString(), '{"id":7}');
    assert.equal((await store.get(key))?.label, undefined);
  });

  it('a completed labelled record replays its outcome, read after the label', async () => {
    const { store, key } = setup(made);
    const first = await store.begin({ key, fingerprint: 'fp', ...lease, label: 'POST /payments' });
    assert.ok(first.kind === 'acquired');
    await store.complete({ key, token: first.token, outcome, retentionMs: RETENTION });
    const replay = await store.begin({ key, fingerprint: 'fp', ...lease });
    assert.ok(replay.kind === 'replay');
    assert.equal(replay.outcome.status, 201);
    assert.deepEqual(replay.outcome.headers, outcome.headers);
    assert.equal(Buffer.from(replay.outcome.body).toString(), '{"id":7}');
    const stats = await store.stats();
    assert.equal(stats.completed, 1, 'stats reads layout 5 headers');
  });

  it('a label with a control character, or longer than 200 characters, is refused before it is written', async () => {
    const { store, raw, key } = setup(made);
    for (const label of ['POST /a\u001b[31m', 'x'.repeat(201), '', 'a\u202eb']) {
      await assert.rejects(store.begin({ key, fingerprint: 'fp', ...lease, label }), isInvalidOptionsError);
    }
    assert.equal(await raw(key), null, 'nothing was written');
  });
});
