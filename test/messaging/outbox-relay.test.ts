import type pg from 'pg';
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
} from '../../src/messaging/outbox/index.js';
import type { Publisher } from '../../src/messaging/publisher.js';
import { requireService } from '../support/services.js';
import { GatedPublisher } from './support/gated-publisher.js';
import { freshOutbox, inTransaction, testPool, until } from './support/pg.js';
import { RecordingPublisher } from './support/recording-publisher.js';

let pool: pg.Pool;
let box: Awaited<ReturnType<typeof freshOutbox>>;
let outbox: Outbox;

beforeAll(async () => {
  await requireService('postgres');
  pool = testPool(8);
  box = await freshOutbox(pool, 'relay');
  outbox = new Outbox({ schema: box.schema });
});

afterAll(async () => {
  await box?.drop();
  await pool?.end();
});

beforeEach(() => pool.query(`DELETE FROM ${box.table}`));

const relayFor = (publisher: Publisher, options: Partial<OutboxRelayOptions> = {}) =>
  new OutboxRelay({
    pool,
    publisher,
    schema: box.schema,
    listen: false,
    minPollMs: 5,
    maxPollMs: 50,
    ...options,
  });

const seqs = (publisher: RecordingPublisher, key: string) =>
  publisher
    .payloads()
    .flatMap((p) => ((p as { key: string }).key === key ? [(p as { seq: number }).seq] : []));

describe('commit order', () => {
  it('an open transaction holds back only its own rows and the writers of its keys; a lower id committing late is not skipped', async () => {
    const publisher = new RecordingPublisher();
    const relay = relayFor(publisher);
    await outbox.add(pool, { topic: 't', key: 'M', payload: { key: 'M', seq: 0 } });
    const slow = await pool.connect();
    let blocked: Promise<string[]> | undefined;
    try {
      await slow.query('BEGIN');
      const lateId = await outbox.add(slow, { topic: 't', key: 'K', payload: { key: 'K', seq: 1 } });
      await outbox.add(slow, { topic: 't', payload: { key: 'none', seq: 1 } });
      // Written after the slow transaction began, committed first: nothing waits for the slow one.
      const [laterId] = await inTransaction(pool, (c) =>
        outbox.add(c, { topic: 't', key: 'L', payload: { key: 'L', seq: 1 } }).then((id) => [id]),
      );
      expect(BigInt(lateId)).toBeLessThan(BigInt(laterId!));
      // A second writer of K waits for the slow transaction's key lock.
      let settled = false;
      blocked = inTransaction(pool, (c) =>
        outbox.addMany(c, [{ topic: 't', key: 'K', payload: { key: 'K', seq: 2 } }]),
      ).finally(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled).toBe(false);

      await relay.runOnce();
      await relay.runOnce();
      expect(publisher.payloads()).toEqual([
        { key: 'M', seq: 0 },
        { key: 'L', seq: 1 },
      ]);

      await slow.query('COMMIT');
    } finally {
      await slow.query('ROLLBACK').catch(() => {});
      slow.release();
    }
    await blocked;
    while ((await relay.runOnce()).claimed > 0) {}
    expect(seqs(publisher, 'K')).toEqual([1, 2]);
    expect(seqs(publisher, 'none')).toEqual([1]);
    expect(publisher.published).toHaveLength(5);
  });
});

describe('order per key across relays', () => {
  it('three relays: every message once, at most one in flight per key, each key in order', async () => {
    const keys = 30;
    const perKey = 20;
    // Key after key, so consecutive rows share a key: a relay that ignored keys would publish them together.
    for (let k = 0; k < keys; k++) {
      await outbox.addMany(
        pool,
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
  it('a failing message parks its own key only; once it goes through, its key resumes in order', async () => {
    for (let seq = 0; seq < 5; seq++) {
      await outbox.addMany(
        pool,
        ['A', 'B', 'C'].map((key) => ({ topic: 't', key, payload: { key, seq } })),
      );
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
      await until(() => seqs(publisher, 'B').length === 5 && seqs(publisher, 'C').length === 5);
      await until(() => publisher.attempts.filter((m) => m.key === 'A').length >= 4);
      expect(seqs(publisher, 'A')).toEqual([0]);
      broken = false;
      await until(() => seqs(publisher, 'A').length === 5);
    } finally {
      await relay.stop();
    }
    expect(seqs(publisher, 'A')).toEqual([0, 1, 2, 3, 4]);
    expect(seqs(publisher, 'B')).toEqual([0, 1, 2, 3, 4]);
  });

  it('retries back off exponentially with jitter', async () => {
    await outbox.add(pool, { topic: 't', key: 'X', payload: { key: 'X', seq: 0 } });
    const publisher = new RecordingPublisher();
    const tried: number[] = [];
    publisher.failWith = () => {
      tried.push(Date.now());
      return new Error('refused');
    };
    const events: RelayEvent[] = [];
    const backoff = { initialMs: 40, maxMs: 320 };
    const relay = relayFor(publisher, { backoff, maxAttempts: 100, onEvent: (e) => events.push(e) });
    await relay.start();
    try {
      await until(() => tried.length >= 6);
    } finally {
      await relay.stop();
    }
    const failures = events.flatMap((e) => (e.type === 'failed' ? [e] : []));
    for (const failure of failures) {
      const ceiling = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failure.attempt - 1));
      expect(failure.retryInMs).toBeGreaterThanOrEqual(ceiling / 2);
      expect(failure.retryInMs).toBeLessThanOrEqual(ceiling);
    }
    // The row is not claimed again before its delay has passed (a lower bound, safe under load).
    for (let i = 1; i < Math.min(tried.length, failures.length); i++) {
      expect(tried[i]! - tried[i - 1]!).toBeGreaterThanOrEqual(failures[i - 1]!.retryInMs - 5);
    }
    expect(failures.map((f) => f.attempt).slice(0, 5)).toEqual([1, 2, 3, 4, 5]);
  });

  it('dead-letters a message the broker keeps refusing while it takes others; list, replay and discard', async () => {
    const publisher = new RecordingPublisher();
    let poisoned = true;
    publisher.failWith = (m) =>
      poisoned && m.topic === 'poison' ? new Error('message too large') : undefined;
    const relay = relayFor(publisher, { maxAttempts: 3, backoff: { initialMs: 1, maxMs: 1 } });
    const poisonId = await outbox.add(pool, { topic: 'poison', key: 'P', payload: { key: 'P', seq: 0 } });
    await outbox.add(pool, { topic: 't', key: 'P', payload: { key: 'P', seq: 1 } });
    for (let round = 0; round < 3; round++) {
      await outbox.add(pool, { topic: 't', key: `good${round}`, payload: { key: 'good', seq: round } });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const cycle = await relay.runOnce();
      expect(cycle).toMatchObject({ claimed: 2, published: 1, failed: 1 });
    }
    const dead = await listDeadLetters(pool, { schema: box.schema });
    expect(dead).toMatchObject([
      { id: poisonId, topic: 'poison', key: 'P', attempts: 3, lastError: 'Error: message too large' },
    ]);
    expect(JSON.parse(dead[0]!.payload.toString())).toEqual({ key: 'P', seq: 0 });

    // The dead letter no longer holds its key back.
    await relay.runOnce();
    expect(seqs(publisher, 'P')).toEqual([1]);

    // Replayed, it queues behind its key's pending event instead of overtaking it.
    poisoned = false;
    await outbox.add(pool, { topic: 't', key: 'P', payload: { key: 'P', seq: 2 } });
    expect(await replayDeadLetters(pool, { ids: [poisonId] }, { schema: box.schema })).toBe(1);
    await relay.runOnce();
    expect(seqs(publisher, 'P')).toEqual([1, 2]);
    await relay.runOnce();
    expect(seqs(publisher, 'P')).toEqual([1, 2, 0]);
    expect(await listDeadLetters(pool, { schema: box.schema })).toEqual([]);

    poisoned = true;
    const second = await outbox.add(pool, { topic: 'poison', key: 'Q', payload: { key: 'Q', seq: 0 } });
    for (let round = 0; round < 3; round++) {
      await outbox.add(pool, { topic: 't', key: `more${round}`, payload: { key: 'more', seq: round } });
      await relay.runOnce();
    }
    expect((await listDeadLetters(pool, { schema: box.schema })).map((d) => d.id)).toEqual([second]);
    expect(await discardDeadLetters(pool, { all: true, topic: 'poison' }, { schema: box.schema })).toBe(1);
    expect((await outboxStats(pool, { schema: box.schema })).dead).toBe(0);
  });

  it('when every publish fails (broker down) nothing is dead-lettered, the relay pauses longer and longer', async () => {
    await outbox.addMany(
      pool,
      [1, 2, 3].map((seq) => ({ topic: 't', key: `o${seq}`, payload: { key: `o${seq}`, seq } })),
    );
    const publisher = new RecordingPublisher();
    let down = true;
    publisher.failWith = () => (down ? new Error('ECONNREFUSED') : undefined);
    const events: RelayEvent[] = [];
    const relay = relayFor(publisher, {
      maxAttempts: 2,
      backoff: { initialMs: 10, maxMs: 160 },
      onEvent: (e) => events.push(e),
    });
    await relay.start();
    try {
      await until(() => events.filter((e) => e.type === 'outage').length >= 6);
      const stats = await outboxStats(pool, { schema: box.schema });
      expect(stats.dead).toBe(0);
      expect(stats.maxAttempts).toBeGreaterThan(2);
      down = false;
      await until(() => publisher.published.length === 3);
    } finally {
      await relay.stop();
    }
    const pauses = events.flatMap((e) => (e.type === 'outage' ? [e.pauseMs] : []));
    pauses.forEach((pause, i) => {
      const ceiling = Math.min(160, 10 * 2 ** i);
      expect(pause).toBeGreaterThanOrEqual(ceiling / 2);
      expect(pause).toBeLessThanOrEqual(ceiling);
    });
  });
});

describe('leases and shutdown', () => {
  for (const keepPublishedMs of [0, 60_000]) {
    for (const late of ['confirmed', 'refused'] as const) {
      it(`keepPublishedMs ${keepPublishedMs}: a relay whose lease ran out and whose publish is then ${late} is fenced while the new owner holds the row; the owner's own failure decides`, async () => {
        const id = await outbox.add(pool, { topic: 't', key: 'F', payload: { key: 'F', seq: 0 } });
        await outbox.add(pool, { topic: 't', key: 'F', payload: { key: 'F', seq: 1 } });
        const row = async () =>
          (await pool.query(`SELECT state, leased_by, attempts FROM ${box.table} WHERE id = $1`, [id]))
            .rows[0] as { state: number; leased_by: string | null; attempts: number } | undefined;
        const stalled = new GatedPublisher();
        const owner = new GatedPublisher();
        const stalledEvents: RelayEvent[] = [];
        const ownerEvents: RelayEvent[] = [];
        const options = { keepPublishedMs, backoff: { initialMs: 1, maxMs: 1 } };
        const stalledCycle = relayFor(stalled, {
          ...options,
          onEvent: (e) => stalledEvents.push(e),
        }).runOnce();
        await until(() => stalled.pending.length === 1);
        const stalledToken = (await row())?.leased_by;

        // Its lease runs out (a process paused by the OS, a long GC); another relay takes the row over, and its
        // publish is in flight when the stalled relay comes back.
        await pool.query(`UPDATE ${box.table} SET lease_until = now() - interval '1 second' WHERE id = $1`, [
          id,
        ]);
        const ownerCycle = relayFor(owner, { ...options, onEvent: (e) => ownerEvents.push(e) }).runOnce();
        await until(() => owner.pending.length === 1);
        const ownerToken = (await row())?.leased_by;
        expect(ownerToken).toBeTruthy();
        expect(ownerToken).not.toBe(stalledToken);

        if (late === 'confirmed') stalled.pending[0]!.confirm();
        else stalled.pending[0]!.refuse(new Error('too late'));
        await stalledCycle;
        expect(stalledEvents).toContainEqual({ type: 'fenced', count: 1 });
        // The stalled relay neither marked, deleted nor rescheduled the row: the owner still holds it.
        expect(await row()).toEqual({ state: 0, leased_by: ownerToken, attempts: 2 });

        owner.pending[0]!.refuse(new Error('broker hiccup'));
        expect(await ownerCycle).toMatchObject({ claimed: 1, failed: 1 });
        expect(ownerEvents).toContainEqual(
          expect.objectContaining({ type: 'failed', id, attempt: 2, dead: false }),
        );
        expect(await row()).toEqual({ state: 0, leased_by: null, attempts: 2 });

        // The retry goes out, and only then the key's next event.
        const publisher = new RecordingPublisher();
        const relay = relayFor(publisher, options);
        await until(async () => {
          await relay.runOnce();
          return seqs(publisher, 'F').length === 2;
        });
        expect(seqs(publisher, 'F')).toEqual([0, 1]);
      });
    }
  }

  it('stop() lets the batch in flight finish and mark', async () => {
    await outbox.addMany(
      pool,
      Array.from({ length: 10 }, (_, i) => ({ topic: 't', key: `s${i}`, payload: { i } })),
    );
    const publisher = new RecordingPublisher();
    publisher.delayFor = () => 300;
    const relay = relayFor(publisher);
    await relay.start();
    await until(() => publisher.attempts.length === 10);
    await relay.stop({ timeoutMs: 5_000 });
    expect(publisher.published).toHaveLength(10);
    expect((await outboxStats(pool, { schema: box.schema })).pending).toBe(0);
  });

  it('stop() past its timeout hands unconfirmed rows back without counting an attempt', async () => {
    await outbox.addMany(
      pool,
      Array.from({ length: 10 }, (_, i) => ({ topic: 't', key: `r${i}`, payload: { i } })),
    );
    const publisher = new RecordingPublisher();
    publisher.delayFor = () => 60_000;
    const events: RelayEvent[] = [];
    const relay = relayFor(publisher, { publishTimeoutMs: 15_000, onEvent: (e) => events.push(e) });
    await relay.start();
    await until(() => publisher.attempts.length === 10);
    await relay.stop({ timeoutMs: 100 });
    expect(events).toContainEqual({ type: 'returned', count: 10 });
    const { rows } = await pool.query(`SELECT state, attempts, leased_by, lease_until FROM ${box.table}`);
    expect(rows).toHaveLength(10);
    for (const row of rows)
      expect(row).toEqual({ state: 0, attempts: 0, leased_by: null, lease_until: null });
  });
});

describe('retention and stats', () => {
  it('keeps published rows when asked, and purges them in bounded batches', async () => {
    await outbox.addMany(
      pool,
      Array.from({ length: 2_500 }, (_, i) => ({ topic: 't', payload: { i } })),
    );
    const publisher = new RecordingPublisher();
    const relay = relayFor(publisher, { keepPublishedMs: 3_600_000, batchSize: 1_000 });
    while ((await relay.runOnce()).claimed > 0) {}
    expect(await outboxStats(pool, { schema: box.schema })).toMatchObject({ pending: 0, published: 2_500 });
    expect(await purgePublished(pool, { schema: box.schema, olderThanMs: 3_600_000 })).toBe(0);
    expect(await purgePublished(pool, { schema: box.schema, batchSize: 1_000, maxBatches: 2 })).toBe(2_000);
    expect(await purgePublished(pool, { schema: box.schema, batchSize: 1_000, maxBatches: 2 })).toBe(500);
    expect((await outboxStats(pool, { schema: box.schema })).published).toBe(0);
  });

  it('stats show pending, in flight, retrying, and the age of the oldest open writing transaction', async () => {
    await outbox.addMany(
      pool,
      [1, 2, 3].map((i) => ({ topic: 't', key: 'same', payload: { i } })),
    );
    const blocker = await pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT pg_current_xact_id()');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const stats = await outboxStats(pool, { schema: box.schema });
      expect(stats).toMatchObject({ pending: 3, inFlight: 0, retrying: 0, dead: 0, published: 0 });
      expect(stats.oldestPendingAgeMs).toBeGreaterThan(0);
      expect(stats.oldestTransactionAgeMs).toBeGreaterThanOrEqual(50);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
  });

  it('a throwing onEvent hook is one process warning; the relay keeps publishing', async () => {
    await outbox.addMany(
      pool,
      [1, 2, 3].map((i) => ({ topic: 't', payload: { i } })),
    );
    const warnings: Error[] = [];
    const onWarning = (warning: Error & { code?: string }) => {
      if (warning.code === 'ONCELY_OUTBOX') warnings.push(warning);
    };
    process.on('warning', onWarning);
    const publisher = new RecordingPublisher();
    const relay = relayFor(publisher, {
      batchSize: 1,
      onEvent: () => {
        throw new Error('dashboard down');
      },
    });
    try {
      while ((await relay.runOnce()).claimed > 0) {}
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(publisher.published).toHaveLength(3);
    expect(warnings.map((w) => w.message)).toEqual([
      'OutboxRelay: onEvent threw on a published event (Error: dashboard down)',
    ]);
  });

  it('validates options at construction', () => {
    const publisher = new RecordingPublisher();
    expect(() => relayFor(publisher, { publishTimeoutMs: 20_000, leaseMs: 30_000 })).toThrow(
      /publishTimeoutMs/,
    );
    expect(() => relayFor(publisher, { batchSize: 0 })).toThrow(/batchSize/);
    expect(() => relayFor(publisher, { backoff: { initialMs: 100, maxMs: 10 } })).toThrow(/maxMs/);
    expect(() => relayFor(publisher, { bogus: 1 } as unknown as OutboxRelayOptions)).toThrow(
      /unknown option "bogus"/,
    );
    const atMostOnce = { name: 'pubsub', delivery: 'at-most-once' as const, publish: async () => {} };
    expect(() => new OutboxRelay({ pool, publisher: atMostOnce })).toThrow(/at-most-once/);
    expect(() => new OutboxRelay({ pool, publisher: atMostOnce, acceptAtMostOnce: true })).not.toThrow();
  });
});
