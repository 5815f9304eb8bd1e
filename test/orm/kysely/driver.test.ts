/**
 * The Kysely driver on its own, against PostgreSQL: how oncely's statements reach a transaction's connection (one
 * query each, each statement's rows back, plugins left out), how it recognizes Kysely's objects, finds a failure's
 * SQLSTATE, and opens transactions through `db.transaction().setIsolationLevel(…).execute(…)`.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import createKnex from 'knex';
import { CamelCasePlugin, type Kysely, sql, type Transaction } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, idempotent } from '../../../src/index.js';
import type { SqlDriver } from '../../../src/orm/driver.js';
import { handleKindOf } from '../../../src/orm/handles.js';
import { kyselyDriver } from '../../../src/orm/kysely/driver.js';
import { KyselyStore, kyselyTransactions } from '../../../src/orm/kysely/index.js';
import { requireService, services } from '../../support/services.js';
import { type Database, freshSchema, kyselyOn } from './fixture.js';

const kind = kyselyTransactions;

describe('Kysely driver', () => {
  let schema: string;
  let db: Kysely<Database>;
  let kyselyPool: pg.Pool;
  let pool: pg.Pool;
  let payments: string;
  /** ReadyForQuery messages on the Kysely pool's connections: one per round trip, whatever the message held. */
  let roundTrips = 0;

  beforeAll(async () => {
    await requireService('postgres');
    schema = await freshSchema('driver');
    ({ db, pool: kyselyPool } = kyselyOn(schema));
    kyselyPool.on('connect', (client) => {
      client.connection.on('readyForQuery', () => {
        roundTrips += 1;
      });
    });
    pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
    payments = `"${schema}".orm_payments`;
  });
  afterAll(async () => {
    await db?.destroy();
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  const count = async (id: string) =>
    Number((await pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);
  // On PostgresDialect the driver is PostgreSQL's (its `run` takes several statements).
  const pgDriver = <DB>(on: Kysely<DB>) => kyselyDriver(on) as SqlDriver<Transaction<DB>>;
  const driver = () => pgDriver(db);
  const options = { isolation: 'read committed', timeoutMs: 30_000 } as const;

  describe('run', () => {
    it("returns each statement's rows, in order, one round trip per statement", async () => {
      await db.transaction().execute(async (trx) => {
        const before = roundTrips;
        const rows = await kind.run(trx, [
          'SELECT 1 AS a',
          "SELECT 'x' AS b, 2 AS c UNION ALL SELECT 'y', 3",
          'SELECT 1 AS none WHERE false',
          `INSERT INTO ${payments} (id, cents) VALUES ('run-1', 5) RETURNING id, cents`,
        ]);
        expect(rows).toEqual([
          [{ a: 1 }],
          [
            { b: 'x', c: 2 },
            { b: 'y', c: 3 },
          ],
          [],
          [{ id: 'run-1', cents: 5 }],
        ]);
        // Kysely's connection reads one result per query, so a batch in one message would lose the rows.
        expect(roundTrips - before).toBe(4);
        expect(await kind.run(trx, [])).toEqual([]);
      });
      expect(await count('run-1')).toBe(1);
    });

    it('leaves the text as written: question marks, dollar numbers and backslashes are not placeholders', async () => {
      await db.transaction().execute(async (trx) => {
        const text = "SELECT 'a?b' AS q, '$1' AS d, 'c\\?d' AS e, '?' AS f";
        expect(await kind.run(trx, [text])).toEqual([[{ q: 'a?b', d: '$1', e: 'c\\?d', f: '?' }]]);
      });
    });

    it("runs without the instance's plugins: a CamelCasePlugin does not rename the store's columns", async () => {
      const camel = db.withPlugin(new CamelCasePlugin());
      await camel.transaction().execute(async (trx) => {
        expect(await kind.run(trx, ['SELECT 1 AS expires_at_ms'])).toEqual([[{ expires_at_ms: 1 }]]);
      });
      expect(await pgDriver(camel).run(['SELECT 2 AS lease_until_ms'])).toEqual([[{ lease_until_ms: 2 }]]);
    });

    it('a savepoint made with run and rolled back with run undoes the writes after it, not those before', async () => {
      await db.transaction().execute(async (trx) => {
        await kind.run(trx, [
          `INSERT INTO ${payments} (id, cents) VALUES ('sp-kept', 1)`,
          'SAVEPOINT oncely_claim',
        ]);
        await trx.insertInto('orm_payments').values({ id: 'sp-undone', cents: 2 }).execute();
        await kind.run(trx, ['ROLLBACK TO SAVEPOINT oncely_claim', 'RELEASE SAVEPOINT oncely_claim']);
      });
      expect(await count('sp-kept')).toBe(1);
      expect(await count('sp-undone')).toBe(0);
    });

    it('on the driver (autocommit): each statement commits on its own, so a later failure keeps the earlier ones', async () => {
      await expect(
        driver().run([
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1)`,
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1)`,
        ]),
      ).rejects.toMatchObject({ code: '23505' });
      expect(await count('auto-1')).toBe(1);
    });
  });

  describe('inTransaction', () => {
    it("is true inside db.transaction()'s callback and false on the instance", async () => {
      expect(kind.inTransaction(db)).toBe(false);
      await db.transaction().execute(async (trx) => {
        expect(kind.inTransaction(trx)).toBe(true);
      });
    });

    it('a controlled transaction: true while open, false once committed or rolled back', async () => {
      const committed = await db.startTransaction().execute();
      expect(kind.inTransaction(committed)).toBe(true);
      await committed.commit().execute();
      expect(kind.inTransaction(committed)).toBe(false);
      const rolledBack = await db.startTransaction().execute();
      await rolledBack.rollback().execute();
      expect(kind.inTransaction(rolledBack)).toBe(false);
    });
  });

  describe('is', () => {
    it("recognizes Kysely's instance and its transactions, as the outbox's lookup does", async () => {
      expect(kind.is(db)).toBe(true);
      expect(handleKindOf(db)?.name).toBe('kysely');
      await db.transaction().execute(async (trx) => {
        expect(kind.is(trx)).toBe(true);
        expect(handleKindOf(trx)?.name).toBe('kysely');
      });
    });

    it("rejects pg's clients, other ORMs' objects and plain values", async () => {
      const client = new pg.Client({ connectionString: services.postgres.url });
      const knex = createKnex({ client: 'pg', connection: services.postgres.url });
      const postgresJs = postgres(services.postgres.url);
      const dataSource = new DataSource({ type: 'postgres', url: services.postgres.url });
      try {
        for (const other of [
          pool,
          client,
          knex,
          drizzle(pool),
          postgresJs,
          dataSource,
          dataSource.manager,
          null,
          undefined,
          {},
          () => {},
          'kysely',
        ]) {
          expect(kind.is(other)).toBe(false);
        }
        await knex.transaction(async (trx) => {
          expect(kind.is(trx)).toBe(false);
        });
      } finally {
        await knex.destroy();
        await postgresJs.end();
      }
    });
  });

  describe('stateOf', () => {
    it('finds the SQLSTATE of a unique violation raised through run', async () => {
      const error = await db
        .transaction()
        .execute((trx) =>
          kind.run(trx, [
            `INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`,
            `INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`,
          ]),
        )
        .catch((caught: unknown) => caught);
      expect(kind.stateOf(error)).toBe('23505');
    });

    it('finds none on errors that are not the server’s', () => {
      expect(kind.stateOf(new Error('socket hang up'))).toBeUndefined();
      expect(kind.stateOf(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBeUndefined();
      expect(kind.stateOf('23505')).toBeUndefined();
    });
  });

  describe('transaction', () => {
    it("commits when the work resolves, and resolves with the work's value", async () => {
      const value = await driver().transaction(async (trx) => {
        await trx.insertInto('orm_payments').values({ id: 'tx-commit', cents: 1 }).execute();
        expect(await count('tx-commit')).toBe(0);
        return 'done';
      }, options);
      expect(value).toBe('done');
      expect(await count('tx-commit')).toBe(1);
    });

    it("rolls back when the work rejects, and rejects with the work's error", async () => {
      const declined = new Error('declined');
      const error = await driver()
        .transaction(async (trx) => {
          await trx.insertInto('orm_payments').values({ id: 'tx-rollback', cents: 1 }).execute();
          throw declined;
        }, options)
        .catch((caught: unknown) => caught);
      expect(error).toBe(declined);
      expect(await count('tx-rollback')).toBe(0);
    });

    it('applies the isolation level', async () => {
      for (const isolation of ['read committed', 'repeatable read', 'serializable'] as const) {
        const level = await driver().transaction(
          async (trx) => {
            const [[row]] = (await kind.run(trx, [
              "SELECT current_setting('transaction_isolation') AS level",
            ])) as [[{ level: string }]];
            return row.level;
          },
          { isolation, timeoutMs: 30_000 },
        );
        expect(level).toBe(isolation);
      }
    });

    it('a transaction whose COMMIT the server answers with ROLLBACK rejects (Kysely checks), and nothing commits', async () => {
      const error = await driver()
        .transaction(async (trx) => {
          await trx.insertInto('orm_payments').values({ id: 'tx-aborted', cents: 1 }).execute();
          await sql`SELECT 1 / 0`.execute(trx).catch(() => {});
          return 'looks fine';
        }, options)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect(await count('tx-aborted')).toBe(0);
    });

    it('has no transaction clock of its own: a transaction outlives no timer of Kysely', async () => {
      const value = await driver().transaction(
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 50));
          return 'still open';
        },
        { isolation: 'read committed', timeoutMs: 10 },
      );
      expect(value).toBe('still open');
    });
  });

  describe("round trips of a request, beside the handler's own", () => {
    it('a new request: BEGIN, the claim, the result, COMMIT; a replay: BEGIN, the claim, ROLLBACK', async () => {
      const store = new KyselyStore({ db, schema });
      const pay = idempotent(async (id: string) => `paid ${id}`, { store, scope: 'trips', key: (id) => id });
      let before = roundTrips;
      expect(await pay.execute('trips-1')).toEqual({ value: 'paid trips-1', replayed: false });
      expect(roundTrips - before).toBe(4);
      before = roundTrips;
      expect((await pay.execute('trips-1')).replayed).toBe(true);
      expect(roundTrips - before).toBe(3);
    });

    it("a joined request: 4 round trips inside the caller's transaction", async () => {
      const store = new KyselyStore({ db, schema });
      const trips = await db.transaction().execute(async (trx) => {
        const pay = idempotent(async (id: string) => `paid ${id}`, {
          store: store.join(trx),
          scope: 'trips-joined',
          key: (id) => id,
        });
        const before = roundTrips;
        await pay.execute('trips-2');
        return roundTrips - before;
      });
      // SAVEPOINT, the claim (a query each), the result, RELEASE SAVEPOINT.
      expect(trips).toBe(4);
    });
  });

  describe('the store', () => {
    it('refuses a transaction, or anything not Kysely, as db', async () => {
      await db.transaction().execute(async (trx) => {
        expect(() => new KyselyStore<Database>({ db: trx })).toThrow(InvalidOptionsError);
        expect(() => new KyselyStore<Database>({ db: trx })).toThrow(/store\.join\(trx\)/);
      });
      expect(() => new KyselyStore({ db: pool as never })).toThrow(InvalidOptionsError);
      expect(() => new KyselyStore(null as never)).toThrow(InvalidOptionsError);
      expect(() => new KyselyStore({ db, schema, extra: 1 } as never)).toThrow(InvalidOptionsError);
    });
  });
});
