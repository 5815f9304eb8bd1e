import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isInvalidOptionsError } from '../../../src/core/errors.js';
import { migrate, Outbox, OutboxRelay } from '../../../src/messaging/outbox/index.js';
import type { MySqlPool } from '../../../src/stores/mysql/index.js';
import { createPool } from '../../mysql/support.js';
import { mysqlFixture as drizzle } from '../../orm/drizzle/mysql-fixture.js';
import { mysqlFixture as knex } from '../../orm/knex/mysql-fixture.js';
import { mysqlFixture as kysely } from '../../orm/kysely/mysql-fixture.js';
import { mysqlFixture as mikroOrm } from '../../orm/mikro-orm/mysql-fixture.js';
import { mysqlFixture as prisma } from '../../orm/prisma/mysql-fixture.js';
import type { MySqlOrmFixture, MySqlOrmWorld } from '../../orm/support/mysql-fixture.js';
import { freshMySqlTables, type MySqlTablesOwner } from '../../orm/support/mysql-tables.js';
import { mysqlFixture as typeorm } from '../../orm/typeorm/mysql-fixture.js';
import { requireService, services } from '../../support/services.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { query, until } from './support.js';

// outbox.add(trx, event) and addMany with each ORM's own transaction object on MariaDB: the ORM's dialect sends the
// MySQL writer's statements (the key's lock, one insert per event) through the ORM's raw query on its transaction, so
// the events commit or roll back with it; an ORM object outside a transaction is refused as on PostgreSQL. The ORMs
// are the MySQL ORM suite's fixtures (test/orm/*/mysql-fixture.ts), each on a database of its own that also holds
// the outbox (the default `outbox`: the connection's database).

function describeOutboxOn<Handle extends object>(fixture: MySqlOrmFixture<Handle>): void {
  describe(`outbox.add through ${fixture.name}'s transaction on MariaDB`, () => {
    let tables: MySqlTablesOwner;
    let world: MySqlOrmWorld<Handle>;
    // A plain pool for what no ORM does here: the outbox's migration, the relay, reading rows and lock waits.
    let pool: MySqlPool;
    const outbox = new Outbox();
    const table = () => `\`${tables.database}\`.oncely_outbox`;

    beforeAll(async () => {
      await requireService('mariadb');
      tables = await freshMySqlTables(`outbox_${fixture.name}`);
      pool = createPool('mysql2', { size: 3 });
      await migrate(pool, { schema: tables.database });
      const url = new URL(services.mariadb.url);
      url.pathname = `/${tables.database}`;
      world = await fixture.open(tables, url.toString(), 4);
    });
    afterAll(async () => {
      await world?.close();
      await pool?.end();
      await tables?.drop();
    });
    beforeEach(async () => {
      await query(pool, `DELETE FROM ${table()}`);
      await query(pool, `DELETE FROM \`${tables.database}\`.oncely_outbox_keys`);
    });

    const relay = (publisher: RecordingPublisher) =>
      new OutboxRelay({ pool, publisher, schema: tables.database, minPollMs: 5, maxPollMs: 50 });
    const drain = async (publisher: RecordingPublisher) => {
      const running = relay(publisher);
      while ((await running.runOnce()).claimed > 0) {}
    };
    const ids = async () =>
      (await query(pool, `SELECT id FROM ${table()} ORDER BY id`)).map((row) => String(row.id));
    const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

    it('commits the event with the ORM transaction, and the relay publishes it', async () => {
      const id = await world.userTransaction(async (trx) => {
        await world.insertPayment(trx, 'p-1', 1250);
        return outbox.add(trx, { topic: 'payment.créé', key: 'p-1', payload: { id: 'p-1', cents: 1250 } });
      });
      expect(id).toMatch(/^\d+$/);
      expect(await ids()).toEqual([id]);
      expect(await tables.count('p-1')).toBe(1);

      const publisher = new RecordingPublisher();
      await drain(publisher);
      expect(publisher.published.map((m) => [m.id, m.topic, m.key, text(m.payload)])).toEqual([
        [id, 'payment.créé', 'p-1', '{"id":"p-1","cents":1250}'],
      ]);
    });

    it('rolls the event back with the ORM transaction: nothing is written, nothing published', async () => {
      await expect(
        world.userTransaction(async (trx) => {
          await world.insertPayment(trx, 'p-2', 500);
          await outbox.add(trx, { topic: 'payment.created', key: 'p-2', payload: { id: 'p-2' } });
          await outbox.addMany(trx, [{ topic: 'payment.created', payload: { id: 'p-2', n: 2 } }]);
          throw new Error('business rule failed');
        }),
      ).rejects.toThrow('business rule failed');
      expect(await ids()).toEqual([]);
      expect(await tables.count('p-2')).toBe(0);
      const publisher = new RecordingPublisher();
      await drain(publisher);
      expect(publisher.attempts).toEqual([]);
    });

    it('refuses the ORM object outside a transaction, as on PostgreSQL, before anything is written', async () => {
      const refusal = `outbox.add: this ${fixture.name} object is not inside a transaction; pass the transaction's (trx/tx/manager) object`;
      const event = { topic: 't', key: 'k', payload: 1 };
      const add = outbox.add(world.db, event);
      await expect(add).rejects.toSatisfy(isInvalidOptionsError);
      await expect(add).rejects.toThrow(refusal);
      await expect(outbox.add(world.db, { topic: 't', payload: 1 })).rejects.toThrow(refusal);
      await expect(outbox.addMany(world.db, [event])).rejects.toThrow(
        refusal.replace('outbox.add:', 'outbox.addMany:'),
      );
      expect(await ids()).toEqual([]);
    });

    it('addMany writes in array order: ids ascending, a key in seq order, bytes and text stored as given', async () => {
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const written = await world.userTransaction((trx) =>
        outbox.addMany(trx, [
          { topic: 'k', key: 'K', payload: { n: 1 } },
          { topic: 'none', payload: bytes, headers: { tenant: "o'brien\\?" } },
          { topic: 'k', key: 'K', payload: { n: 2 } },
          { topic: 'l', key: 'L', payload: { n: 1 } },
          { topic: 'k', key: 'K', payload: { n: 3 } },
        ]),
      );
      expect(written).toHaveLength(5);
      expect(await ids()).toEqual(written);
      expect(written.map(BigInt)).toEqual(written.map(BigInt).sort((a, b) => (a < b ? -1 : 1)));
      const seqs = await query(pool, `SELECT seq FROM ${table()} WHERE topic = 'k' ORDER BY id`);
      expect(seqs.map((row) => Number(row.seq))).toEqual([1, 2, 3]);

      const publisher = new RecordingPublisher();
      await drain(publisher);
      const of = (topic: string) => publisher.published.filter((m) => m.topic === topic);
      expect(of('k').map((m) => [m.id, text(m.payload)])).toEqual([
        [written[0], '{"n":1}'],
        [written[2], '{"n":2}'],
        [written[4], '{"n":3}'],
      ]);
      const [blob] = of('none');
      expect(Buffer.from(blob!.payload)).toEqual(bytes);
      expect(blob!.headers).toEqual({ tenant: "o'brien\\?" });
      expect(blob!.contentType).toBe('application/octet-stream');
    });

    it("holds the key's lock until the ORM commits: a second writer of the key waits, and goes out after it", async () => {
      let commitFirst!: () => void;
      const firstMayCommit = new Promise<void>((resolve) => {
        commitFirst = resolve;
      });
      let firstId = '';
      const first = world.userTransaction(async (trx) => {
        firstId = await outbox.add(trx, { topic: 't', key: 'K', payload: { n: 1 } });
        await firstMayCommit;
      });
      await until(() => firstId !== '');
      let secondThread = 0;
      let secondDone = false;
      const second = world.userTransaction(async (trx) => {
        secondThread = await world.connectionId(trx);
        const id = await outbox.add(trx, { topic: 't', key: 'K', payload: { n: 2 } });
        secondDone = true;
        return id;
      });
      // The second writer is inside its add, waiting for the first transaction's lock on the key's row.
      await until(async () => {
        if (secondThread === 0) return false;
        const rows = await query(
          pool,
          'SELECT trx_state FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = ?',
          [secondThread],
        );
        return rows[0]?.trx_state === 'LOCK WAIT';
      });
      expect(secondDone).toBe(false);
      commitFirst();
      await first;
      const secondId = await second;

      const publisher = new RecordingPublisher();
      await drain(publisher);
      expect(publisher.published.map((m) => [m.id, text(m.payload)])).toEqual([
        [firstId, '{"n":1}'],
        [secondId, '{"n":2}'],
      ]);
    });
  });
}

describeOutboxOn(kysely);
describeOutboxOn(knex);
describeOutboxOn(drizzle);
describeOutboxOn(typeorm);
describeOutboxOn(mikroOrm);
describeOutboxOn(prisma);
