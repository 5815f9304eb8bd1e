import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  discardDeadLetters,
  listDeadLetters,
  Outbox,
  OutboxRelay,
  type OutboxRelayOptions,
  outboxStats,
  purgePublished,
  type RelayEvent,
  replayDeadLetters,
} from '../../../src/messaging/outbox/index.js';
import { mysqlBackend } from '../../../src/messaging/outbox/mysql/backend.js';
import { keyHashOf } from '../../../src/messaging/outbox/mysql/writer.js';
import type { Publisher } from '../../../src/messaging/publisher.js';
import { GatedPublisher } from '../support/gated-publisher.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import {
  connectionOf,
  countOf,
  createTestOutbox,
  inTransaction,
  type MySqlConnection,
  query,
  run,
  type TestOutbox,
  until,
} from './support.js';

// The relay on MySQL / MariaDB: the same OutboxRelay, its claims, settles and housekeeping in the MySQL dialect.

let box: TestOutbox;
let outbox: Outbox;

beforeAll(async () => {
  // A short lock wait: a claim that waited for a lock instead of skipping it fails in seconds, not 50.
  box = await createTestOutbox('relay', 'mariadb', { size: 10, lockWaitS: 3 });
  outbox = new Outbox({ schema: box.schema });
});
afterAll(() => box?.drop());
beforeEach(async () => {
  await query(box.pool, `DELETE FROM ${box.table}`);
  await query(box.pool, `DELETE FROM ${box.keys}`);
});

const relayFor = (publisher: Publisher, options: Partial<OutboxRelayOptions> = {}) =>
  new OutboxRelay({ pool: box.pool, publisher, schema: box.schema, minPollMs: 5, maxPollMs: 50, ...options });

/** Commits `events` in a transaction of their own. */
const commit = (events: Parameters<Outbox['addMany']>[1]) =>
  inTransaction(box.pool, (connection) => outbox.addMany(connection, events));

const seqs = (publisher: RecordingPublisher, key: string) =>
  publisher
    .payloads()
    .flatMap((p) => ((p as { key: string }).key === key ? [(p as { seq: number }).seq] : []));

const drain = async (relay: OutboxRelay) => {
  while ((await relay.runOnce()).claimed > 0) {}
};

describe('commit order', () => {
  it('an open transaction holds back only its own rows and the writers of its keys; a lower id committing late is not skipped', async () => {
    const publisher = new RecordingPublisher();
    const relay = relayFor(publisher);
    await commit([{ topic: 't', key: 'M', payload: { key: 'M', seq: 0 } }]);
    const slow = await connectionOf(box.pool);
    let blocked: Promise<string[]> | undefined;
    try {
      await run(slow, 'START TRANSACTION');
      const lateId = await outbox.add(slow, { topic: 't', key: 'K', payload: { key: 'K', seq: 1 } });
      await outbox.add(slow, { topic: 't', payload: { key: 'none', seq: 1 } });
      // Written after the slow transaction began, committed first: nothing waits for the slow one.
      const [laterId] = await commit([{ topic: 't', key: 'L', payload: { key: 'L', seq: 1 } }]);
      expect(BigInt(lateId)).toBeLessThan(BigInt(laterId!));
      // A second writer of K waits for the slow transaction's key lock.
      let settled = false;
      blocked = commit([{ topic: 't', key: 'K', payload: { key: 'K', seq: 2 } }]).finally(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled).toBe(false);

      await drain(relay);
      expect(publisher.payloads()).toEqual([
        { key: 'M', seq: 0 },
        { key: 'L', seq: 1 },
      ]);
      await run(slow, 'COMMIT');
    } finally {
      slow.destroy();
    }
    await blocked;
    await drain(relay);
    expect(seqs(publisher, 'K')).toEqual([1, 2]);
    expect(seqs(publisher, 'none')).toEqual([1]);
    expect(publisher.published).toHaveLength(5);
  });
});

describe('several relays at once', () => {
  it('a row another relay holds locked is skipped, not waited for (SKIP LOCKED): the claim takes the others at once', async () => {
    const ids = await commit([1, 2, 3].map((i) => ({ topic: 't', key: `s${i}`, payload: { i } })));
    const holder = await connectionOf(box.pool);
    try {
      // Another relay in the middle of its claim transaction holds the first row's lock.
      await run(holder, 'START TRANSACTION');
      await run(holder, `SELECT id FROM ${box.table} WHERE id = ? FOR UPDATE`, [ids[0]]);
      const publisher = new RecordingPublisher();
      const started = Date.now();
      const cycle = await relayFor(publisher).runOnce();
      expect(cycle).toMatchObject({ claimed: 2, published: 2 });
      // innodb_lock_wait_timeout is 50 s here: a claim that waited for the lock would not be back this soon.
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(publisher.published.map((m) => m.id)).toEqual(ids.slice(1));
    } finally {
      await run(holder, 'ROLLBACK');
      holder.release();
    }
  });

  it('four relays claiming over and over, each at its own pace: no row is claimed twice, and they share the rows', async () => {
    const total = 400;
    for (let chunk = 0; chunk < total / 100; chunk++) {
      await commit(Array.from({ length: 100 }, (_, i) => ({ topic: 't', payload: { n: chunk * 100 + i } })));
    }
    const publisher = new RecordingPublisher();
    // Rows stay leased a moment while published, and the relays drift apart: one reads its candidates while
    // another's claim commits, and must find those rows leased on their latest version.
    publisher.delayFor = () => Math.floor(Math.random() * 3);
    const claimedBy = [0, 0, 0, 0];
    await Promise.all(
      claimedBy.map(async (_, i) => {
        const relay = relayFor(publisher, { batchSize: 25 });
        for (let cycle = 0; cycle < 100 && publisher.attempts.length < total; cycle++) {
          claimedBy[i]! += (await relay.runOnce()).claimed;
        }
      }),
    );
    expect(publisher.attempts).toHaveLength(total);
    expect(new Set(publisher.attempts.map((m) => m.id)).size).toBe(total);
    expect(claimedBy.filter((claimed) => claimed > 0).length).toBeGreaterThan(1);
    expect(await countOf(box.pool, box.table)).toBe(0);
  });

  it('three running relays: every message once, at most one in flight per key, each key in order', async () => {
    const keys = 20;
    const perKey = 10;
    for (let k = 0; k < keys; k++) {
      await commit(
        Array.from({ length: perKey }, (_, seq) => ({
          topic: 't',
          key: `k${k}`,
          payload: { key: `k${k}`, seq },
        })),
      );
    }
    const publisher = new RecordingPublisher();
    publisher.delayFor = () => Math.floor(Math.random() * 3);
    const relays = [1, 2, 3].map(() => relayFor(publisher, { batchSize: 7 }));
    await Promise.all(relays.map((r) => r.start()));
    try {
      await until(() => publisher.published.length >= keys * perKey);
    } finally {
      await Promise.all(relays.map((r) => r.stop()));
    }
    expect(publisher.published).toHaveLength(keys * perKey);
    expect(new Set(publisher.published.map((m) => m.id)).size).toBe(keys * perKey);
    expect(publisher.maxInFlightPerKey).toBe(1);
    for (let k = 0; k < keys; k++) expect(seqs(publisher, `k${k}`)).toEqual([...Array(perKey).keys()]);
  });
});

describe('failures', () => {
  it('dead-letters a message after maxAttempts while it takes others; list, replay behind its key, discard', async () => {
    const publisher = new RecordingPublisher();
    let poisoned = true;
    publisher.failWith = (m) =>
      poisoned && m.topic === 'poison' ? new Error('message too large') : undefined;
    const events: RelayEvent[] = [];
    const relay = relayFor(publisher, {
      maxAttempts: 3,
      backoff: { initialMs: 1, maxMs: 1 },
      onEvent: (e) => events.push(e),
    });
    const [poisonId] = await commit([{ topic: 'poison', key: 'P', payload: { key: 'P', seq: 0 } }]);
    await commit([{ topic: 't', key: 'P', payload: { key: 'P', seq: 1 } }]);
    for (let round = 0; round < 3; round++) {
      await commit([{ topic: 't', key: `good${round}`, payload: { key: 'good', seq: round } }]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await relay.runOnce()).toMatchObject({ claimed: 2, published: 1, failed: 1 });
    }
    expect(events.filter((e) => e.type === 'failed').map((e) => (e as { dead: boolean }).dead)).toEqual([
      false,
      false,
      true,
    ]);
    const dead = await listDeadLetters(box.pool, { schema: box.schema });
    expect(dead).toMatchObject([
      { id: poisonId, topic: 'poison', key: 'P', attempts: 3, lastError: 'Error: message too large' },
    ]);
    expect(JSON.parse(dead[0]!.payload.toString())).toEqual({ key: 'P', seq: 0 });
    expect(dead[0]!.deadAt.getTime()).toBeGreaterThan(Date.now() - 60_000);

    // The dead letter no longer holds its key back.
    await relay.runOnce();
    expect(seqs(publisher, 'P')).toEqual([1]);

    // Replayed, it queues behind its key's pending event instead of overtaking it.
    poisoned = false;
    await commit([{ topic: 't', key: 'P', payload: { key: 'P', seq: 2 } }]);
    expect(await replayDeadLetters(box.pool, { ids: [poisonId!] }, { schema: box.schema })).toBe(1);
    await relay.runOnce();
    expect(seqs(publisher, 'P')).toEqual([1, 2]);
    await relay.runOnce();
    expect(seqs(publisher, 'P')).toEqual([1, 2, 0]);
    expect(await listDeadLetters(box.pool, { schema: box.schema })).toEqual([]);

    poisoned = true;
    const [second] = await commit([{ topic: 'poison', key: 'Q', payload: { key: 'Q', seq: 0 } }]);
    for (let round = 0; round < 3; round++) {
      await commit([{ topic: 't', key: `more${round}`, payload: { key: 'more', seq: round } }]);
      await relay.runOnce();
    }
    expect((await listDeadLetters(box.pool, { schema: box.schema })).map((d) => d.id)).toEqual([second]);
    expect(await discardDeadLetters(box.pool, { all: true, topic: 'other' }, { schema: box.schema })).toBe(0);
    expect(await discardDeadLetters(box.pool, { all: true, topic: 'poison' }, { schema: box.schema })).toBe(
      1,
    );
    expect((await outboxStats(box.pool, { schema: box.schema })).dead).toBe(0);
  });

  it('replaying many dead letters of one key keeps their order, behind the key’s pending event', async () => {
    await commit(
      Array.from({ length: 5 }, (_, seq) => ({ topic: 't', key: 'R', payload: { key: 'R', seq } })),
    );
    await query(box.pool, `UPDATE ${box.table} SET state = 2, dead_at_ms = 1`);
    await commit([{ topic: 't', key: 'R', payload: { key: 'R', seq: 9 } }]);
    expect(await replayDeadLetters(box.pool, { all: true }, { schema: box.schema })).toBe(5);
    const publisher = new RecordingPublisher();
    await drain(relayFor(publisher));
    expect(seqs(publisher, 'R')).toEqual([9, 0, 1, 2, 3, 4]);
  });

  it('when every publish of a batch fails (broker down), nothing is dead-lettered, whatever the attempts', async () => {
    await commit([1, 2].map((i) => ({ topic: 't', key: `o${i}`, payload: { i } })));
    const publisher = new RecordingPublisher();
    publisher.failWith = () => new Error('ECONNREFUSED');
    const relay = relayFor(publisher, { maxAttempts: 2, backoff: { initialMs: 1, maxMs: 1 } });
    for (let cycle = 0; cycle < 5; cycle++) {
      await relay.runOnce();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const stats = await outboxStats(box.pool, { schema: box.schema });
    expect(stats).toMatchObject({ dead: 0, pending: 2 });
    expect(stats.maxAttempts).toBeGreaterThan(2);
  });

  it('a failing message parks its own key only; once it goes through, its key resumes in order', async () => {
    for (let seq = 0; seq < 4; seq++) {
      await commit(['A', 'B'].map((key) => ({ topic: 't', key, payload: { key, seq } })));
    }
    const publisher = new RecordingPublisher();
    let broken = true;
    publisher.failWith = (m) =>
      broken && m.key === 'A' && JSON.parse(Buffer.from(m.payload).toString()).seq === 1
        ? new Error('nope')
        : undefined;
    const relay = relayFor(publisher, { backoff: { initialMs: 20, maxMs: 100 }, maxAttempts: 1_000 });
    await relay.start();
    try {
      await until(() => seqs(publisher, 'B').length === 4);
      await until(() => publisher.attempts.filter((m) => m.key === 'A').length >= 3);
      expect(seqs(publisher, 'A')).toEqual([0]);
      broken = false;
      await until(() => seqs(publisher, 'A').length === 4);
    } finally {
      await relay.stop();
    }
    expect(seqs(publisher, 'A')).toEqual([0, 1, 2, 3]);
  });
});

describe('leases and shutdown', () => {
  it("a relay whose lease ran out is fenced while the new owner holds the row; the owner's failure decides", async () => {
    const [id] = await commit([
      { topic: 't', key: 'F', payload: { key: 'F', seq: 0 } },
      { topic: 't', key: 'F', payload: { key: 'F', seq: 1 } },
    ]);
    const row = async () => {
      const [found] = await query(
        box.pool,
        `SELECT state, leased_by, attempts FROM ${box.table} WHERE id = ?`,
        [id],
      );
      return found === undefined
        ? undefined
        : { state: Number(found.state), leased_by: found.leased_by, attempts: Number(found.attempts) };
    };
    const stalled = new GatedPublisher();
    const owner = new GatedPublisher();
    const stalledEvents: RelayEvent[] = [];
    const ownerEvents: RelayEvent[] = [];
    const options = { backoff: { initialMs: 1, maxMs: 1 } };
    const stalledCycle = relayFor(stalled, { ...options, onEvent: (e) => stalledEvents.push(e) }).runOnce();
    await until(() => stalled.pending.length === 1);
    const stalledToken = (await row())?.leased_by;

    await query(box.pool, `UPDATE ${box.table} SET lease_until_ms = 0 WHERE id = ?`, [id]);
    const ownerCycle = relayFor(owner, { ...options, onEvent: (e) => ownerEvents.push(e) }).runOnce();
    await until(() => owner.pending.length === 1);
    const ownerToken = (await row())?.leased_by;
    expect(ownerToken).toBeTruthy();
    expect(ownerToken).not.toBe(stalledToken);

    stalled.pending[0]!.confirm();
    await stalledCycle;
    expect(stalledEvents).toContainEqual({ type: 'fenced', count: 1 });
    expect(await row()).toEqual({ state: 0, leased_by: ownerToken, attempts: 2 });

    owner.pending[0]!.refuse(new Error('broker hiccup'));
    expect(await ownerCycle).toMatchObject({ claimed: 1, failed: 1 });
    expect(ownerEvents).toContainEqual(
      expect.objectContaining({ type: 'failed', id, attempt: 2, dead: false }),
    );
    expect(await row()).toEqual({ state: 0, leased_by: null, attempts: 2 });

    const publisher = new RecordingPublisher();
    await until(async () => {
      await relayFor(publisher, options).runOnce();
      return seqs(publisher, 'F').length === 2;
    });
    expect(seqs(publisher, 'F')).toEqual([0, 1]);
  });

  it('stop() past its timeout hands unconfirmed rows back without counting an attempt', async () => {
    await commit(Array.from({ length: 5 }, (_, i) => ({ topic: 't', key: `r${i}`, payload: { i } })));
    const publisher = new RecordingPublisher();
    publisher.delayFor = () => 60_000;
    const events: RelayEvent[] = [];
    const relay = relayFor(publisher, { publishTimeoutMs: 15_000, onEvent: (e) => events.push(e) });
    await relay.start();
    await until(() => publisher.attempts.length === 5);
    await relay.stop({ timeoutMs: 100 });
    expect(events).toContainEqual({ type: 'returned', count: 5 });
    const rows = await query(box.pool, `SELECT state, attempts, leased_by, lease_until_ms FROM ${box.table}`);
    expect(rows.map((r) => ({ ...r, state: Number(r.state), attempts: Number(r.attempts) }))).toEqual(
      Array.from({ length: 5 }, () => ({ state: 0, attempts: 0, leased_by: null, lease_until_ms: null })),
    );
  });
});

describe('retention, housekeeping and stats', () => {
  it('keeps published rows when asked, and purges them in bounded batches', async () => {
    await commit(Array.from({ length: 250 }, (_, i) => ({ topic: 't', payload: { i } })));
    const relay = relayFor(new RecordingPublisher(), { keepPublishedMs: 3_600_000, batchSize: 100 });
    await drain(relay);
    expect(await outboxStats(box.pool, { schema: box.schema })).toMatchObject({ pending: 0, published: 250 });
    expect(await purgePublished(box.pool, { schema: box.schema, olderThanMs: 3_600_000 })).toBe(0);
    expect(await purgePublished(box.pool, { schema: box.schema, batchSize: 100, maxBatches: 2 })).toBe(200);
    expect(await purgePublished(box.pool, { schema: box.schema, batchSize: 100, maxBatches: 2 })).toBe(50);
    expect((await outboxStats(box.pool, { schema: box.schema })).published).toBe(0);
  });

  it('a running relay purges published rows past keepPublishedMs', async () => {
    await commit(Array.from({ length: 30 }, (_, i) => ({ topic: 't', payload: { i } })));
    const events: RelayEvent[] = [];
    const relay = relayFor(new RecordingPublisher(), {
      keepPublishedMs: 1,
      purgeIntervalMs: 20,
      onEvent: (e) => events.push(e),
    });
    await relay.start();
    try {
      await until(async () => (await countOf(box.pool, box.table)) === 0);
    } finally {
      await relay.stop();
    }
    expect(
      events.filter((e) => e.type === 'purged').reduce((n, e) => n + (e as { count: number }).count, 0),
    ).toBe(30);
  });

  it('removes key rows idle for a while whose key has nothing pending, never one a writer holds', async () => {
    await commit(['idle', 'pending', 'held'].map((key) => ({ topic: 't', key, payload: { key, seq: 0 } })));
    const publisher = new RecordingPublisher();
    await drain(relayFor(publisher));
    await commit([{ topic: 't', key: 'pending', payload: { key: 'pending', seq: 1 } }]);
    // Two minutes older: past the idle time.
    await query(box.pool, `UPDATE ${box.keys} SET used_at_ms = used_at_ms - 120000 WHERE 1 = 1`);
    const holder = await connectionOf(box.pool);
    try {
      // A writer of `held` in the middle of its transaction, its key row just as old.
      await run(holder, 'START TRANSACTION');
      await outbox.add(holder, { topic: 't', key: 'held', payload: { key: 'held', seq: 1 } });
      await run(holder, `UPDATE ${box.keys} SET used_at_ms = used_at_ms - 120000 WHERE key_hash = ?`, [
        keyHashOf('held'),
      ]);
      const backend = mysqlBackend(box.pool, box.schema, undefined);
      expect(await backend.purgeIdle!(100)).toBe(1);
      expect(await countOf(box.pool, box.keys)).toBe(2);
      await run(holder, 'COMMIT');
    } finally {
      holder.destroy();
    }
    // The kept keys go on in order; the forgotten one starts again and still goes out.
    await commit(['pending', 'held', 'idle'].map((key) => ({ topic: 't', key, payload: { key, seq: 2 } })));
    await drain(relayFor(publisher));
    expect(seqs(publisher, 'pending')).toEqual([0, 1, 2]);
    expect(seqs(publisher, 'held')).toEqual([0, 1, 2]);
    expect(seqs(publisher, 'idle')).toEqual([0, 2]);
  });

  it('stats show pending, in flight, retrying, dead, and the age of the oldest open writing transaction', async () => {
    await commit([1, 2, 3].map((i) => ({ topic: 't', key: 'same', payload: { i } })));
    await commit([{ topic: 'other', payload: {} }]);
    const gated = new GatedPublisher();
    const cycle = relayFor(gated, { topics: ['other'] }).runOnce();
    await until(() => gated.pending.length === 1);
    const blocker: MySqlConnection = await connectionOf(box.pool);
    try {
      await run(blocker, 'START TRANSACTION');
      await outbox.add(blocker, { topic: 't', key: 'open', payload: {} });
      await new Promise((resolve) => setTimeout(resolve, 60));
      const stats = await outboxStats(box.pool, { schema: box.schema });
      expect(stats).toMatchObject({
        pending: 4,
        inFlight: 1,
        retrying: 0,
        dead: 0,
        published: 0,
        maxAttempts: 1,
      });
      expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(60);
      expect(stats.oldestTransactionAgeMs).toBeGreaterThanOrEqual(50);
      expect(await outboxStats(box.pool, { schema: box.schema, topics: ['t'] })).toMatchObject({
        pending: 3,
        inFlight: 0,
      });
    } finally {
      await run(blocker, 'ROLLBACK');
      blocker.release();
    }
    gated.pending[0]!.refuse(new Error('down'));
    await cycle;
    expect(await outboxStats(box.pool, { schema: box.schema })).toMatchObject({ pending: 4, retrying: 1 });
  });

  it('relays limited to topics publish, purge and count only their own', async () => {
    await commit(
      ['a', 'b', 'a', 'c'].map((topic, i) => ({ topic, key: 'shared', payload: { key: topic, seq: i } })),
    );
    const onlyA = new RecordingPublisher();
    await drain(relayFor(onlyA, { topics: ['a'] }));
    expect(onlyA.payloads()).toEqual([
      { key: 'a', seq: 0 },
      { key: 'a', seq: 2 },
    ]);
    const rest = new RecordingPublisher();
    await drain(relayFor(rest, { topics: ['b', 'c'], keepPublishedMs: 60_000 }));
    expect(rest.published.map((m) => m.topic)).toEqual(['b', 'c']);
    expect(await purgePublished(box.pool, { schema: box.schema, topics: ['b'] })).toBe(1);
    expect(await outboxStats(box.pool, { schema: box.schema, topics: ['c'] })).toMatchObject({
      published: 1,
    });
  });

  it('validates options at construction: LISTEN does not exist on MySQL', () => {
    const publisher = new RecordingPublisher();
    expect(() => relayFor(publisher, { listen: true })).toThrow(/MySQL has no LISTEN\/NOTIFY/);
    expect(() => relayFor(publisher, { listen: false })).not.toThrow();
    expect(() => relayFor(publisher, { schema: 'no spaces' })).toThrow(/schema/);
    expect(() => new OutboxRelay({ pool: {} as never, publisher })).toThrow(/pg Pool, or a mysql2/);
  });
});
