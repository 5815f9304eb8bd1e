// The relay's `topics` filter: two applications (or the demo and an application) sharing one outbox table, each
// relay publishing, purging and counting only its own topics. Real PostgreSQL; the publisher records.
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  Outbox,
  OutboxRelay,
  type OutboxRelayOptions,
  outboxStats,
  purgePublished,
} from '../../src/messaging/outbox/index.js';
import { requireService } from '../support/services.js';
import { freshOutbox, testPool, until } from './support/pg.js';
import { RecordingPublisher } from './support/recording-publisher.js';

let pool: pg.Pool;
let box: Awaited<ReturnType<typeof freshOutbox>>;
let outbox: Outbox;

beforeAll(async () => {
  await requireService('postgres');
  pool = testPool(6);
  box = await freshOutbox(pool, 'topics');
  outbox = new Outbox({ schema: box.schema });
});

afterAll(async () => {
  await box?.drop();
  await pool?.end();
});

beforeEach(() => pool.query(`DELETE FROM ${box.table}`));

const relayFor = (publisher: RecordingPublisher, options: Partial<OutboxRelayOptions> = {}) =>
  new OutboxRelay({ pool, publisher, schema: box.schema, listen: false, ...options });

const drain = async (relay: OutboxRelay) => {
  while ((await relay.runOnce()).claimed > 0) {}
};

const topicsOf = (publisher: RecordingPublisher) => publisher.published.map((m) => m.topic);

describe('relays limited to topics', () => {
  it('two relays with disjoint topic filters on one table each publish only their topics', async () => {
    // Interleaved, with keys shared between the two applications: neither relay may touch the other's rows.
    await outbox.addMany(
      pool,
      Array.from({ length: 40 }, (_, i) => ({
        topic: ['billing.charged', 'shipping.sent', 'billing.refunded', 'shipping.returned'][i % 4]!,
        key: `k${i % 5}`,
        payload: { i },
      })),
    );
    const billing = new RecordingPublisher();
    const shipping = new RecordingPublisher();
    const billingRelay = relayFor(billing, { topics: ['billing.charged', 'billing.refunded'], batchSize: 7 });
    const shippingRelay = relayFor(shipping, {
      topics: ['shipping.sent', 'shipping.returned'],
      batchSize: 7,
    });

    await drain(billingRelay);
    expect(billing.published).toHaveLength(20);
    expect(new Set(topicsOf(billing))).toEqual(new Set(['billing.charged', 'billing.refunded']));
    // The other application's rows are all still there, untouched.
    const left = await pool.query<{ topic: string; attempts: number; leased_by: string | null }>(
      `SELECT topic, attempts, leased_by FROM ${box.table}`,
    );
    expect(left.rows).toHaveLength(20);
    for (const row of left.rows) {
      expect(row.topic).toMatch(/^shipping\./);
      expect(row).toMatchObject({ attempts: 0, leased_by: null });
    }

    await drain(shippingRelay);
    expect(shipping.published).toHaveLength(20);
    expect(new Set(topicsOf(shipping))).toEqual(new Set(['shipping.sent', 'shipping.returned']));
    expect(billing.published).toHaveLength(20);
  });

  it('a key keeps its order within one relay’s topics, and a key under two relays’ topics holds neither back', async () => {
    // Key K: billing 0, shipping 1, billing 2. The billing relay publishes 0 then 2 without waiting for the
    // shipping row between them (another application's stream); the shipping relay is not held back by billing 2.
    const add = (topic: string, seq: number) => outbox.add(pool, { topic, key: 'K', payload: { seq } });
    await add('billing.charged', 0);
    await add('shipping.sent', 1);
    await add('billing.refunded', 2);
    const billing = new RecordingPublisher();
    const relay = relayFor(billing, { topics: ['billing.charged', 'billing.refunded'] });
    expect(await relay.runOnce()).toMatchObject({ claimed: 1 });
    expect(await relay.runOnce()).toMatchObject({ claimed: 1 });
    expect(billing.payloads()).toEqual([{ seq: 0 }, { seq: 2 }]);
    const shipping = new RecordingPublisher();
    await drain(relayFor(shipping, { topics: ['shipping.sent'] }));
    expect(shipping.payloads()).toEqual([{ seq: 1 }]);
  });

  it('claims through the pending (topic, seq) index: a relay of a small topic does not walk a large backlog', async () => {
    await pool.query(
      `INSERT INTO ${box.table} (topic, key, payload, content_type)
       SELECT 'big', 'k' || (i % 500), '\\x00', 'application/octet-stream' FROM generate_series(1, 20000) AS i`,
    );
    await outbox.add(pool, { topic: 'small', key: 'k1', payload: { small: true } });
    await pool.query(`ANALYZE ${box.table}`);
    const { outboxStatements } = await import('../../src/messaging/outbox/sql.js');
    const { outboxTable } = await import('../../src/messaging/outbox/table.js');
    const sql = outboxStatements(outboxTable(box.schema)).claimTopics;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`, [
        500,
        30_000,
        '00000000-0000-4000-8000-000000000000',
        ['small'],
      ]);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/oncely_outbox_pending_topic_seq/);
      expect(plan).not.toMatch(/Seq Scan/);
      // No more than the claimed row (and its key probe) was read from the table.
      const scanned = [...plan.matchAll(/Index Scan using oncely_outbox_pending_topic_seq .*rows=(\d+)/g)];
      expect(scanned.length).toBeGreaterThan(0);
      for (const match of scanned) expect(Number(match[1])).toBeLessThanOrEqual(1);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    const small = new RecordingPublisher();
    await relayFor(small, { topics: ['small'] }).runOnce();
    expect(small.payloads()).toEqual([{ small: true }]);
  });

  it('purges and counts only its topics', async () => {
    await outbox.addMany(
      pool,
      Array.from({ length: 6 }, (_, i) => ({ topic: i % 2 === 0 ? 'a' : 'b', payload: { i } })),
    );
    await outbox.add(pool, { topic: 'c', payload: { pending: true } });
    const publisher = new RecordingPublisher();
    // Both relays keep their published rows: each must purge its own only.
    await drain(relayFor(publisher, { topics: ['a', 'b'], keepPublishedMs: 60_000 }));
    expect(await outboxStats(pool, { schema: box.schema, topics: ['a'] })).toMatchObject({
      pending: 0,
      published: 3,
    });
    expect(await outboxStats(pool, { schema: box.schema, topics: ['c'] })).toMatchObject({
      pending: 1,
      published: 0,
    });
    expect(await outboxStats(pool, { schema: box.schema })).toMatchObject({ pending: 1, published: 6 });
    expect(await purgePublished(pool, { schema: box.schema, topics: ['b'] })).toBe(3);
    expect(await outboxStats(pool, { schema: box.schema })).toMatchObject({ pending: 1, published: 3 });
  });

  it('the relay’s own purge removes only its topics’ published rows', async () => {
    await outbox.addMany(pool, [
      { topic: 'mine', payload: { i: 1 } },
      { topic: 'theirs', payload: { i: 2 } },
    ]);
    // The other application keeps its published rows for a week; this relay purges its own at once.
    await drain(relayFor(new RecordingPublisher(), { topics: ['theirs'], keepPublishedMs: 604_800_000 }));
    const relay = relayFor(new RecordingPublisher(), {
      topics: ['mine'],
      keepPublishedMs: 1,
      purgeIntervalMs: 1,
    });
    await relay.start();
    try {
      await until(async () => {
        const mine = await outboxStats(pool, { schema: box.schema, topics: ['mine'] });
        return mine.pending + mine.published === 0;
      });
    } finally {
      await relay.stop();
    }
    expect(await outboxStats(pool, { schema: box.schema, topics: ['theirs'] })).toMatchObject({
      published: 1,
    });
  });

  it('validates topics at construction', async () => {
    const publisher = new RecordingPublisher();
    for (const bad of [[], [''], ['a', 3], 'billing', null]) {
      expect(() => relayFor(publisher, { topics: bad as unknown as string[] }), JSON.stringify(bad)).toThrow(
        /topics/,
      );
    }
    expect(() => relayFor(publisher, { topics: ['a', 'a', 'b'] })).not.toThrow();
    await expect(outboxStats(pool, { schema: box.schema, topics: [] })).rejects.toThrow(/topics/);
    await expect(purgePublished(pool, { schema: box.schema, topics: [''] })).rejects.toThrow(/topics/);
  });
});
