import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInvalidOptionsError } from '../../src/core/errors.js';
import { migrate, Outbox, OutboxRelay, outboxStats } from '../../src/messaging/outbox/index.js';
import { requireService } from '../support/services.js';
import { freshOutbox, inTransaction, testPool, until } from './support/pg.js';
import { RecordingPublisher } from './support/recording-publisher.js';

let pool: pg.Pool;
let box: Awaited<ReturnType<typeof freshOutbox>>;

beforeAll(async () => {
  await requireService('postgres');
  pool = testPool(6);
  box = await freshOutbox(pool, 'writer');
});

afterAll(async () => {
  await box?.drop();
  await pool?.end();
});

// The table as migrate() made it before `seq` (rows read in (xid, id) order), to test the upgrade.
const PREVIOUS_SCHEMA = `
  CREATE TABLE oncely_outbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    topic text NOT NULL, key text, payload bytea NOT NULL, content_type text NOT NULL,
    headers jsonb NOT NULL DEFAULT '{}'::jsonb, state smallint NOT NULL DEFAULT 0,
    attempts integer NOT NULL DEFAULT 0, available_at timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz, leased_by uuid, created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    published_at timestamptz, dead_at timestamptz, last_error text
  ) WITH (fillfactor = 80);
  CREATE INDEX oncely_outbox_pending ON oncely_outbox (xid, id) WHERE state = 0;
  CREATE INDEX oncely_outbox_pending_key ON oncely_outbox (key, xid, id) WHERE state = 0;
  CREATE INDEX oncely_outbox_published ON oncely_outbox (published_at) WHERE state = 1;
  CREATE INDEX oncely_outbox_dead ON oncely_outbox (id) WHERE state = 2`;

/** The indexes migrate() leaves on the table, by name: the same from a new table and from an upgraded one. */
const MIGRATED_INDEXES = [
  'oncely_outbox_dead',
  'oncely_outbox_pending_key_seq',
  'oncely_outbox_pending_seq',
  'oncely_outbox_pending_topic_seq',
  'oncely_outbox_pkey',
  'oncely_outbox_published',
];

const indexesOf = async (schema: string): Promise<string[]> =>
  (
    await pool.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'oncely_outbox' ORDER BY indexname`,
      [schema],
    )
  ).rows.map((r) => r.indexname);

describe('migrate', () => {
  it('is safe to run again and from several connections at once', async () => {
    await Promise.all([1, 2, 3].map(() => migrate(pool, { schema: box.schema })));
    expect(await indexesOf(box.schema)).toEqual(MIGRATED_INDEXES);
  });

  it('upgrades a table made before seq: pending rows keep their (xid, id) order, the old indexes go', async () => {
    const schema = `${box.schema}_up`;
    await pool.query(`CREATE SCHEMA "${schema}"`);
    try {
      await pool.query(`SET search_path TO "${schema}"; ${PREVIOUS_SCHEMA}; RESET search_path`);
      const table = `"${schema}".oncely_outbox`;
      const insert = (c: pg.ClientBase, seq: number) =>
        c.query(
          `INSERT INTO ${table} (topic, key, payload, content_type) VALUES ('t', 'K', $1, 'application/json')`,
          [Buffer.from(JSON.stringify({ key: 'K', seq }))],
        );
      // The transaction with the lower xid writes the higher id: (xid, id) order differs from id order.
      await inTransaction(pool, async (first) => {
        await first.query('SELECT pg_current_xact_id()');
        await inTransaction(pool, (second) => insert(second, 1));
        await insert(first, 0);
      });
      await Promise.all([1, 2].map(() => migrate(pool, { schema })));
      expect(await indexesOf(schema)).toEqual(MIGRATED_INDEXES);
      await new Outbox({ schema }).add(pool, { topic: 't', key: 'K', payload: { key: 'K', seq: 2 } });
      const publisher = new RecordingPublisher();
      const relay = new OutboxRelay({ pool, publisher, schema, listen: false });
      while ((await relay.runOnce()).claimed > 0) {}
      expect(publisher.payloads()).toEqual([0, 1, 2].map((seq) => ({ key: 'K', seq })));
    } finally {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  it('refuses a schema name that is not a plain identifier', async () => {
    await expect(migrate(pool, { schema: 'x"; DROP TABLE y; --' })).rejects.toSatisfy(isInvalidOptionsError);
  });
});

describe('Outbox.add', () => {
  it('stores JSON and bytes payloads, headers and the trace context, only when the transaction commits', async () => {
    const outbox = new Outbox({
      schema: box.schema,
      traceContext: () => ({
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tenant: 'trace',
      }),
    });
    const [jsonId, bytesId] = await inTransaction(pool, async (client) => [
      await outbox.add(client, {
        topic: 'payment.created',
        key: 'p-1',
        payload: { id: 'p-1', amount: 1250 },
      }),
      await outbox.add(client, {
        topic: 'blob',
        payload: Buffer.from([0, 255, 1]),
        headers: { tenant: 'explicit' },
        contentType: 'application/x-thing',
      }),
    ]);
    await expect(
      inTransaction(pool, async (client) => {
        await outbox.add(client, { topic: 'payment.created', key: 'p-2', payload: { id: 'p-2' } });
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');

    const { rows } = await pool.query(
      `SELECT id::text, topic, key, payload, content_type, headers FROM ${box.table} ORDER BY id`,
    );
    expect(rows).toEqual([
      {
        id: jsonId,
        topic: 'payment.created',
        key: 'p-1',
        payload: Buffer.from('{"id":"p-1","amount":1250}'),
        content_type: 'application/json',
        headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tenant: 'trace' },
      },
      {
        id: bytesId,
        topic: 'blob',
        key: null,
        payload: Buffer.from([0, 255, 1]),
        content_type: 'application/x-thing',
        headers: {
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          tenant: 'explicit',
        },
      },
    ]);
    await pool.query(`DELETE FROM ${box.table}`);
  });

  it('addMany inserts in order in one statement and returns the ids in the same order', async () => {
    const outbox = new Outbox({ schema: box.schema, notify: false });
    const events = Array.from({ length: 50 }, (_, i) => ({ topic: 't', key: `k${i % 3}`, payload: { i } }));
    const ids = await inTransaction(pool, (client) => outbox.addMany(client, events));
    expect(ids).toHaveLength(50);
    const { rows } = await pool.query(`SELECT id, payload FROM ${box.table} ORDER BY id`);
    expect(rows.map((r) => String(r.id))).toEqual(ids);
    expect(rows.map((r) => JSON.parse(r.payload.toString()).i)).toEqual(events.map((e) => e.payload.i));
    await pool.query(`DELETE FROM ${box.table}`);
  });

  it('validates options at construction and events at add', async () => {
    expect(() => new Outbox({ schema: 'no spaces' })).toThrow(/schema/);
    expect(() => new Outbox({ notify: 'yes' as unknown as boolean })).toThrow(/notify/);
    expect(() => new Outbox({ schmea: 'x' } as unknown as { schema: string })).toThrow(
      /unknown option "schmea"/,
    );
    const outbox = new Outbox({ schema: box.schema });
    await expect(outbox.add(pool, { topic: '', payload: 1 })).rejects.toThrow(/topic/);
    await expect(outbox.add(pool, { topic: 't', payload: undefined })).rejects.toThrow(/payload/);
    await expect(outbox.add(pool, { topic: 't', payload: () => 1 })).rejects.toThrow(/payload/);
    await expect(
      outbox.add(pool, { topic: 't', payload: 1, headers: { n: 1 as unknown as string } }),
    ).rejects.toThrow(/header "n"/);
  });
});

describe('wake-up', () => {
  beforeAll(() => pool.query(`DELETE FROM ${box.table}`));

  it('a NOTIFY wakes an idle relay long before its next poll', async () => {
    const publisher = new RecordingPublisher();
    const relay = new OutboxRelay({
      pool,
      publisher,
      schema: box.schema,
      minPollMs: 60_000,
      maxPollMs: 60_000,
    });
    await relay.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await new Outbox({ schema: box.schema }).add(pool, { topic: 'wake', payload: 1 });
      const deadline = Date.now() + 10_000;
      while (publisher.published.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Polling alone would wait 60 s; delivery within the test's budget means the NOTIFY did it.
      expect(publisher.published.map((m) => m.topic)).toEqual(['wake']);
    } finally {
      await relay.stop();
    }
  });

  it('without LISTEN (or without NOTIFY), polling alone delivers', async () => {
    const publisher = new RecordingPublisher();
    const relay = new OutboxRelay({ pool, publisher, schema: box.schema, listen: false, maxPollMs: 100 });
    await relay.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await new Outbox({ schema: box.schema, notify: false }).add(pool, { topic: 'poll', payload: 2 });
      const deadline = Date.now() + 10_000;
      while (publisher.published.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(publisher.published.map((m) => m.topic)).toEqual(['poll']);
      await until(async () => (await outboxStats(pool, { schema: box.schema })).pending === 0);
    } finally {
      await relay.stop();
    }
  });
});
