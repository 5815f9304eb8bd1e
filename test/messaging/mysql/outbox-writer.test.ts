import mysqlCallback from 'mysql2';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isInvalidOptionsError } from '../../../src/core/errors.js';
import { migrate, mysqlOutboxDdl, Outbox, OutboxRelay } from '../../../src/messaging/outbox/index.js';
import { MYSQL_URL } from '../../mysql/support.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import {
  connectionOf,
  countOf,
  createTestOutbox,
  DRIVERS,
  inTransaction,
  query,
  run,
  type TestOutbox,
} from './support.js';

// outbox.add on a MySQL / MariaDB connection: the dialect chosen by the connection's kind, inside the caller's
// transaction only, on both drivers.

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe.each(DRIVERS)('%s', (driver) => {
  let box: TestOutbox;
  let outbox: Outbox;

  beforeAll(async () => {
    box = await createTestOutbox(`w${driver.slice(0, 2)}`, driver);
    outbox = new Outbox({ schema: box.schema, traceContext: () => ({ traceparent: TRACEPARENT }) });
  });
  afterAll(() => box?.drop());
  beforeEach(async () => {
    await query(box.pool, `DELETE FROM ${box.table}`);
    await query(box.pool, `DELETE FROM ${box.keys}`);
  });

  const rows = () =>
    query(
      box.pool,
      `SELECT id, topic, \`key\`, seq, payload, content_type, headers FROM ${box.table} ORDER BY id`,
    );

  it('stores JSON and bytes payloads, headers and the trace context byte for byte, only when the transaction commits', async () => {
    const [jsonId, bytesId] = await inTransaction(box.pool, async (connection) => [
      await outbox.add(connection, {
        topic: 'payment.créé',
        key: 'p-1',
        payload: { id: 'p-1', amount: 1250 },
      }),
      await outbox.add(connection, {
        topic: 'blob',
        payload: Buffer.from([0, 255, 1]),
        headers: { tenant: 'explicit' },
        contentType: 'application/x-thing',
      }),
    ]);
    await expect(
      inTransaction(box.pool, async (connection) => {
        await outbox.add(connection, { topic: 'payment.créé', key: 'p-2', payload: { id: 'p-2' } });
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');

    const text = (value: unknown) => Buffer.from(value as Uint8Array).toString('utf8');
    expect(
      (await rows()).map((row) => ({
        id: String(row.id),
        topic: text(row.topic),
        key: row.key === null ? null : text(row.key),
        payload: Buffer.from(row.payload as Uint8Array),
        contentType: text(row.content_type),
        headers: JSON.parse(text(row.headers)),
      })),
    ).toEqual([
      {
        id: jsonId,
        topic: 'payment.créé',
        key: 'p-1',
        payload: Buffer.from('{"id":"p-1","amount":1250}'),
        contentType: 'application/json',
        headers: { traceparent: TRACEPARENT },
      },
      {
        id: bytesId,
        topic: 'blob',
        key: null,
        payload: Buffer.from([0, 255, 1]),
        contentType: 'application/x-thing',
        headers: { traceparent: TRACEPARENT, tenant: 'explicit' },
      },
    ]);
  });

  it('refuses a connection outside any transaction with InvalidOptionsError, before an event is written', async () => {
    const connection = await connectionOf(box.pool);
    try {
      for (const event of [
        { topic: 'loose', payload: 1 },
        { topic: 'loose', key: 'k', payload: 1 },
      ]) {
        const refused = await outbox.add(connection, event).catch((error: unknown) => error);
        expect(isInvalidOptionsError(refused)).toBe(true);
        expect(String(refused)).toMatch(/not inside a transaction/);
      }
      await expect(outbox.addMany(connection, [{ topic: 'loose', key: 'k2', payload: 1 }])).rejects.toThrow(
        /not inside a transaction/,
      );
      // After a COMMIT the connection is outside again: the flag is the server's answer to this statement.
      await run(connection, 'START TRANSACTION');
      await outbox.add(connection, { topic: 'inside', key: 'k', payload: 1 });
      await run(connection, 'COMMIT');
      await expect(outbox.add(connection, { topic: 'loose', key: 'k', payload: 1 })).rejects.toThrow(
        /not inside a transaction/,
      );
      // With autocommit off every statement is inside a transaction: the event is accepted, and goes with it.
      await run(connection, 'SET autocommit = 0');
      await outbox.add(connection, { topic: 'implicit', payload: 1 });
      await outbox.add(connection, { topic: 'implicit', key: 'k', payload: 1 });
      await run(connection, 'ROLLBACK');
      await run(connection, 'SET autocommit = 1');
    } finally {
      // Closed, not handed back: a failure above may have left the session in a transaction.
      connection.destroy();
    }
    expect((await rows()).map((row) => Buffer.from(row.topic as Uint8Array).toString())).toEqual(['inside']);
  });

  it('refuses a pool, whose statements each commit on their own', async () => {
    await expect(outbox.add(box.pool, { topic: 't', payload: 1 })).rejects.toThrow(/MySQL pool/);
    expect(await countOf(box.pool, box.table)).toBe(0);
  });

  it("addMany keeps array order; each key's events take consecutive seqs in commit order", async () => {
    const events = ['A', 'B', 'A', null, 'A'].map((key, i) => ({ topic: 't', key, payload: { i } }));
    const first = await inTransaction(box.pool, (connection) => outbox.addMany(connection, events));
    const second = await inTransaction(box.pool, (connection) =>
      outbox.addMany(connection, [{ topic: 't', key: 'B', payload: { i: 5 } }]),
    );
    // A rolled-back write gives its seqs back: the next writer of the key takes them again.
    await expect(
      inTransaction(box.pool, async (c) => {
        await outbox.add(c, { topic: 't', key: 'B', payload: { i: 'gone' } });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const third = await inTransaction(box.pool, (c) =>
      outbox.add(c, { topic: 't', key: 'B', payload: { i: 6 } }),
    );
    const all = [...first, ...second];
    expect(all.map(BigInt)).toEqual([...all.map(BigInt)].sort((a, b) => (a < b ? -1 : 1)));
    const stored = (await rows()).map((row) => ({
      id: String(row.id),
      key: row.key === null ? null : Buffer.from(row.key as Uint8Array).toString(),
      seq: Number(row.seq),
    }));
    expect(stored.filter((row) => [...all, third].includes(row.id))).toEqual([
      { id: all[0], key: 'A', seq: 1 },
      { id: all[1], key: 'B', seq: 1 },
      { id: all[2], key: 'A', seq: 2 },
      { id: all[3], key: null, seq: 0 },
      { id: all[4], key: 'A', seq: 3 },
      { id: all[5], key: 'B', seq: 2 },
      { id: third, key: 'B', seq: 3 },
    ]);
  });

  it('refuses values its columns cannot hold, before anything is sent', async () => {
    await inTransaction(box.pool, async (connection) => {
      await expect(outbox.add(connection, { topic: 't'.repeat(1_025), payload: 1 })).rejects.toThrow(
        /topic is longer than 1024 bytes/,
      );
      await expect(
        outbox.addMany(connection, [
          { topic: 't', payload: 1 },
          { topic: 't', key: 'k'.repeat(65_536), payload: 1 },
        ]),
      ).rejects.toThrow(/key is longer/);
      await expect(outbox.add(connection, { topic: 't', payload: undefined })).rejects.toThrow(/payload/);
    });
    expect(await countOf(box.pool, box.table)).toBe(0);
  });

  it('a rolled-back event is never published; a committed one is', async () => {
    await expect(
      inTransaction(box.pool, async (connection) => {
        await outbox.add(connection, { topic: 'never', key: 'r', payload: 1 });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    await inTransaction(box.pool, (connection) =>
      outbox.add(connection, { topic: 'once', key: 'r', payload: 2 }),
    );
    const publisher = new RecordingPublisher();
    const relay = new OutboxRelay({ pool: box.pool, publisher, schema: box.schema });
    while ((await relay.runOnce()).claimed > 0) {}
    expect(publisher.published.map((m) => m.topic)).toEqual(['once']);
  });
});

describe('on mysql2, a callback connection', () => {
  it('is refused with a pointer to .promise()', async () => {
    const connection = mysqlCallback.createConnection(MYSQL_URL);
    await new Promise<void>((resolve, reject) =>
      connection.connect((error) => (error ? reject(error) : resolve())),
    );
    try {
      await expect(new Outbox().add(connection, { topic: 't', payload: 1 })).rejects.toThrow(/promise\(\)/);
    } finally {
      connection.end();
    }
  });
});

describe('migrate', () => {
  let box: TestOutbox;
  beforeAll(async () => {
    box = await createTestOutbox('migrate', 'mariadb');
  });
  afterAll(() => box?.drop());

  const shapeOf = async (schema: string) =>
    query(
      box.pool,
      `SELECT table_name AS t, index_name AS i, seq_in_index AS n, column_name AS c
       FROM information_schema.STATISTICS WHERE table_schema = ? ORDER BY t, i, n`,
      [schema],
    );

  it('is safe to run again and from several connections at once; the printed DDL makes the same tables', async () => {
    await Promise.all([1, 2, 3].map(() => migrate(box.pool, { schema: box.schema })));
    const migrated = await shapeOf(box.schema);
    expect(migrated.map((row) => `${row.t}.${row.i}`)).toEqual(
      expect.arrayContaining([
        'oncely_outbox.PRIMARY',
        'oncely_outbox.oncely_outbox_key_order',
        'oncely_outbox.oncely_outbox_published',
        'oncely_outbox.oncely_outbox_state_id',
        'oncely_outbox.oncely_outbox_state_topic_id',
        'oncely_outbox_keys.PRIMARY',
        'oncely_outbox_keys.oncely_outbox_keys_used',
      ]),
    );
    const printed = `${box.schema}_ddl`;
    try {
      for (const statement of mysqlOutboxDdl(printed)
        .split(/;\n/)
        .filter((s) => s.trim() !== ''))
        await query(box.pool, statement);
      const made = await shapeOf(printed);
      expect(made).toEqual(migrated);
    } finally {
      await query(box.pool, `DROP DATABASE IF EXISTS \`${printed}\``);
    }
  });

  it("without a schema, creates the tables in the pool's own database", () => {
    expect(mysqlOutboxDdl()).toMatch(/CREATE TABLE IF NOT EXISTS `oncely_outbox` \(/);
    expect(mysqlOutboxDdl()).not.toMatch(/CREATE DATABASE/);
    expect(mysqlOutboxDdl('billing')).toMatch(/CREATE DATABASE IF NOT EXISTS `billing`;/);
    expect(() => mysqlOutboxDdl('no spaces')).toThrow(/schema/);
  });
});
