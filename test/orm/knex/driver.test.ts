/**
 * The Knex driver on its own, against PostgreSQL: how oncely's statements reach a transaction's connection (all in
 * one message, each statement's rows back, the text as written), how it recognizes Knex's objects, finds a failure's
 * SQLSTATE, and opens transactions through `knex.transaction(fn, { isolationLevel })`.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import createKnex, { type Knex } from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, idempotent } from '../../../src/index.js';
import type { SqlDriver } from '../../../src/orm/driver.js';
import { handleKindOf } from '../../../src/orm/handles.js';
import { knexDriver } from '../../../src/orm/knex/driver.js';
import { KnexStore, knexTransactions } from '../../../src/orm/knex/index.js';
import { requireService, services } from '../../support/services.js';
import { freshSchema, knexOn } from './fixture.js';

const kind = knexTransactions;

describe('Knex driver', () => {
  let schema: string;
  let knex: Knex;
  let pool: pg.Pool;
  let payments: string;
  /** ReadyForQuery messages on Knex's connections: one per round trip, whatever the message held. */
  let roundTrips = 0;

  beforeAll(async () => {
    await requireService('postgres');
    schema = await freshSchema('driver');
    knex = knexOn(schema, 10, {
      afterCreate(connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) {
        connection.connection.on('readyForQuery', () => {
          roundTrips += 1;
        });
        done(null, connection);
      },
    });
    pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
    payments = `"${schema}".orm_payments`;
  });
  afterAll(async () => {
    await knex?.destroy();
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  const count = async (id: string) =>
    Number((await pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);
  // On the pg client the driver is PostgreSQL's (its `run` takes several statements).
  const driver = () => knexDriver(knex) as SqlDriver<Knex.Transaction>;
  const options = { isolation: 'read committed', timeoutMs: 30_000 } as const;

  describe('run', () => {
    it("sends several statements in one message (one round trip) and returns each one's rows, in order", async () => {
      await knex.transaction(async (trx) => {
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
        expect(roundTrips - before).toBe(1);
      });
      expect(await count('run-1')).toBe(1);
    });

    it('one statement comes back as one result; none, as none', async () => {
      await knex.transaction(async (trx) => {
        expect(await kind.run(trx, ["SELECT 'only' AS one"])).toEqual([[{ one: 'only' }]]);
        expect(await kind.run(trx, [])).toEqual([]);
      });
    });

    it("leaves the text as written: Knex's ? placeholders and \\? escapes do not apply to oncely's literals", async () => {
      await knex.transaction(async (trx) => {
        const text =
          "SELECT 'a?b' AS q, '$1' AS d, 'c\\?d' AS e, '??' AS f, '{\"u\":\"/x?y=1\"}'::jsonb ? 'u' AS g";
        expect(await kind.run(trx, ['SELECT 1 AS first -- a trailing comment', text])).toEqual([
          [{ first: 1 }],
          [{ q: 'a?b', d: '$1', e: 'c\\?d', f: '??', g: true }],
        ]);
      });
    });

    it("keeps the text's values out of Knex's logs and error messages (they hold the stored responses)", async () => {
      const logged: string[] = [];
      const log = (query: { sql: string }) => logged.push(query.sql);
      knex.on('query', log);
      try {
        const error = await knex
          .transaction((trx) =>
            kind.run(trx, ["SELECT 'card 4242' AS secret", "SELECT 1 / 0 WHERE 'card 4242' > ''"]),
          )
          .catch((caught: unknown) => caught);
        expect((error as Error).message).toBe('oncely (2 statements) - division by zero');
        expect(kind.stateOf?.(error)).toBe('22012');
      } finally {
        knex.off('query', log);
      }
      expect(logged.join('\n')).not.toContain('4242');
      expect(logged).toContain('oncely (2 statements)');
    });

    it('refuses an entry that holds several statements, whose rows could not be told apart', async () => {
      await knex.transaction(async (trx) => {
        await expect(kind.run(trx, ['SELECT 1 AS a; SELECT 2 AS b', 'SELECT 3 AS c'])).rejects.toThrow(
          /2 statements came back as 3 results/,
        );
      });
    });

    it('a savepoint made with run and rolled back with run undoes the writes after it, not those before', async () => {
      await knex.transaction(async (trx) => {
        await kind.run(trx, [
          `INSERT INTO ${payments} (id, cents) VALUES ('sp-kept', 1)`,
          'SAVEPOINT oncely_claim',
        ]);
        await trx('orm_payments').insert({ id: 'sp-undone', cents: 2 });
        await kind.run(trx, ['ROLLBACK TO SAVEPOINT oncely_claim', 'RELEASE SAVEPOINT oncely_claim']);
      });
      expect(await count('sp-kept')).toBe(1);
      expect(await count('sp-undone')).toBe(0);
    });

    it('refuses a transaction Knex has completed (its connection may be back in the pool)', async () => {
      let finished: Knex.Transaction | undefined;
      await knex.transaction(async (trx) => {
        finished = trx;
      });
      await expect(kind.run(finished!, ['SELECT 1'])).rejects.toThrow(/already complete/);
    });

    it('on the driver (autocommit): each statement commits on its own, so a later failure keeps the earlier ones', async () => {
      await expect(
        driver().run([
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1)`,
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1)`,
        ]),
      ).rejects.toMatchObject({ code: '23505' });
      expect(await count('auto-1')).toBe(1);
      expect(await driver().run(['SELECT 1 AS a', 'SELECT 2 AS b'])).toEqual([[{ a: 1 }], [{ b: 2 }]]);
    });
  });

  describe('inTransaction', () => {
    it("is true inside knex.transaction()'s callback, false on the instance and once the transaction completed", async () => {
      expect(kind.inTransaction(knex as Knex.Transaction)).toBe(false);
      let finished: Knex.Transaction | undefined;
      await knex.transaction(async (trx) => {
        expect(kind.inTransaction(trx)).toBe(true);
        finished = trx;
      });
      expect(finished?.isTransaction).toBe(true);
      expect(kind.inTransaction(finished!)).toBe(false);
    });
  });

  describe('is', () => {
    it("recognizes Knex's instance and its transactions, as the outbox's lookup does", async () => {
      expect(kind.is(knex)).toBe(true);
      expect(handleKindOf(knex)?.name).toBe('knex');
      await knex.transaction(async (trx) => {
        expect(kind.is(trx)).toBe(true);
        expect(handleKindOf(trx)?.name).toBe('knex');
      });
    });

    it("rejects pg's clients, other ORMs' objects and plain values", async () => {
      const client = new pg.Client({ connectionString: services.postgres.url });
      const kysely = new Kysely({ dialect: new PostgresDialect({ pool }) });
      const postgresJs = postgres(services.postgres.url);
      const dataSource = new DataSource({ type: 'postgres', url: services.postgres.url });
      try {
        for (const other of [
          pool,
          client,
          kysely,
          drizzle(pool),
          postgresJs,
          dataSource,
          dataSource.manager,
          null,
          undefined,
          {},
          () => {},
          'knex',
        ]) {
          expect(kind.is(other)).toBe(false);
        }
      } finally {
        await postgresJs.end();
      }
    });
  });

  describe('stateOf', () => {
    it('finds the SQLSTATE of a unique violation raised through run', async () => {
      const error = await knex
        .transaction((trx) =>
          kind.run(trx, [
            `INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`,
            `INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`,
          ]),
        )
        .catch((caught: unknown) => caught);
      expect(kind.stateOf?.(error)).toBe('23505');
    });

    it('finds none on errors that are not the server’s', () => {
      expect(kind.stateOf?.(new Error('socket hang up'))).toBeUndefined();
      expect(kind.stateOf?.(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBeUndefined();
      expect(kind.stateOf?.('23505')).toBeUndefined();
    });
  });

  describe('transaction', () => {
    it("commits when the work resolves, and resolves with the work's value", async () => {
      const value = await driver().transaction(async (trx) => {
        await trx('orm_payments').insert({ id: 'tx-commit', cents: 1 });
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
          await trx('orm_payments').insert({ id: 'tx-rollback', cents: 1 });
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

    it('a transaction whose COMMIT the server would answer with ROLLBACK rejects (Knex alone resolves), and nothing commits', async () => {
      const error = await driver()
        .transaction(async (trx) => {
          await trx('orm_payments').insert({ id: 'tx-aborted', cents: 1 });
          await trx.raw('SELECT 1 / 0').catch(() => {});
          return 'looks fine';
        }, options)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/COMMIT would roll back/);
      expect(await count('tx-aborted')).toBe(0);
    });

    it('…also when the failure is still on its way (the status of the last ReadyForQuery is not yet the failure’s)', async () => {
      const error = await driver()
        .transaction(async (trx) => {
          await trx('orm_payments').insert({ id: 'tx-aborting', cents: 1 });
          // Not awaited: the work resolves while the failing statement is in flight.
          void trx.raw('SELECT 1 / 0').catch(() => {});
          return 'looks fine';
        }, options)
        .catch((caught: unknown) => caught);
      expect((error as Error).message).toMatch(/COMMIT would roll back/);
      expect(await count('tx-aborting')).toBe(0);
    });

    it('has no transaction clock of its own: a transaction outlives no timer of Knex', async () => {
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
      const store = new KnexStore({ knex, schema });
      const pay = idempotent(async (id: string) => `paid ${id}`, { store, scope: 'trips', key: (id) => id });
      let before = roundTrips;
      expect(await pay.execute('trips-1')).toEqual({ value: 'paid trips-1', replayed: false });
      expect(roundTrips - before).toBe(4);
      before = roundTrips;
      expect((await pay.execute('trips-1')).replayed).toBe(true);
      expect(roundTrips - before).toBe(3);
    });

    it("a joined request: 3 round trips inside the caller's transaction", async () => {
      const store = new KnexStore({ knex, schema });
      const trips = await knex.transaction(async (trx) => {
        const pay = idempotent(async (id: string) => `paid ${id}`, {
          store: store.join(trx),
          scope: 'trips-joined',
          key: (id) => id,
        });
        const before = roundTrips;
        await pay.execute('trips-2');
        return roundTrips - before;
      });
      // SAVEPOINT with the claim (one message), the result, RELEASE SAVEPOINT.
      expect(trips).toBe(3);
    });
  });

  describe('the store', () => {
    it('refuses a transaction, another dialect, or anything not Knex, as knex', async () => {
      await knex.transaction(async (trx) => {
        expect(() => new KnexStore({ knex: trx })).toThrow(InvalidOptionsError);
        expect(() => new KnexStore({ knex: trx })).toThrow(/store\.join\(trx\)/);
      });
      // mysql2 is MySQL's (knex-mysql.test.ts); a dialect oncely has no statements for is refused.
      const mssql = createKnex({ client: 'mssql' });
      try {
        expect(() => new KnexStore({ knex: mssql })).toThrow(/dialect is mssql/);
      } finally {
        await mssql.destroy();
      }
      expect(() => new KnexStore({ knex: pool as never })).toThrow(InvalidOptionsError);
      expect(() => new KnexStore(null as never)).toThrow(InvalidOptionsError);
      expect(() => new KnexStore({ knex, schema, extra: 1 } as never)).toThrow(InvalidOptionsError);
    });
  });
});
