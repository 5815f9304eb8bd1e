/**
 * The MikroORM driver on its own, against PostgreSQL: how oncely's statements reach a transaction's connection (all
 * in one message through `em.execute`, each statement's rows back), how it recognizes MikroORM's entity managers,
 * finds a failure's SQLSTATE, and opens transactions through `em.transactional`, whose unit of work is flushed
 * before the COMMIT.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { drizzle } from 'drizzle-orm/node-postgres';
import knex from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError, idempotent } from '../../../src/index.js';
import type { SqlDriver } from '../../../src/orm/driver.js';
import { handleKindOf } from '../../../src/orm/handles.js';
import { mikroOrmDriver } from '../../../src/orm/mikro-orm/driver.js';
import { MikroOrmStore, mikroOrmTransactions } from '../../../src/orm/mikro-orm/index.js';
import { requireService, services } from '../../support/services.js';
import { freshSchema, mikroOrmOn, PaymentEntity } from './fixture.js';

const kind = mikroOrmTransactions;

describe('MikroORM driver', () => {
  let schema: string;
  let orm: MikroORM;
  let pool: pg.Pool;
  let payments: string;

  beforeAll(async () => {
    await requireService('postgres');
    schema = await freshSchema('driver');
    orm = await mikroOrmOn(schema);
    pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
    payments = `"${schema}".orm_payments`;
  });
  afterAll(async () => {
    await orm?.close();
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  const count = async (id: string) =>
    Number((await pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);
  /** Every message pg sends, as text: one call is one round trip. */
  const countSent = () => vi.spyOn(pg.Client.prototype, 'query');
  const textsOf = (sent: ReturnType<typeof countSent>) =>
    sent.mock.calls.map(([query]) =>
      typeof query === 'string' ? query : String((query as unknown as { text: string }).text),
    );
  // On @mikro-orm/postgresql the driver is PostgreSQL's (its `run` takes several statements).
  const driver = () => mikroOrmDriver(orm.em) as SqlDriver<EntityManager>;

  describe('run', () => {
    it("sends several statements in one message and returns each one's rows, in order", async () => {
      await orm.em.transactional(async (em) => {
        const sent = countSent();
        try {
          const rows = await kind.run(em, [
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
          expect(sent).toHaveBeenCalledTimes(1);
        } finally {
          sent.mockRestore();
        }
      });
      expect(await count('run-1')).toBe(1);
    });

    it('one statement comes back as one result', async () => {
      await orm.em.transactional(async (em) => {
        expect(await kind.run(em, ["SELECT 'only' AS one"])).toEqual([[{ one: 'only' }]]);
        expect(await kind.run(em, ['SELECT 1 AS none WHERE false'])).toEqual([[]]);
        expect(await kind.run(em, [])).toEqual([]);
        expect(await driver().run([])).toEqual([]);
      });
    });

    it('leaves the text as written: question marks, dollar numbers and backslashes are not placeholders', async () => {
      const text = String.raw`SELECT '?' AS q, '??' AS qq, '\?' AS escaped, '$1' AS dollar, E'a\\b' AS backslash`;
      await orm.em.transactional(async (em) => {
        expect(await kind.run(em, [text])).toEqual([
          [{ q: '?', qq: '??', escaped: '\\?', dollar: '$1', backslash: 'a\\b' }],
        ]);
        expect(await kind.run(em, [text, 'SELECT 1 AS n'])).toEqual([
          [{ q: '?', qq: '??', escaped: '\\?', dollar: '$1', backslash: 'a\\b' }],
          [{ n: 1 }],
        ]);
      });
    });

    it('refuses statements whose results do not line up (an empty statement has none), naming the counts', async () => {
      await orm.em.transactional(async (em) => {
        await expect(kind.run(em, ['SELECT 1 AS a', ''])).rejects.toThrow(/2 statements came back as/);
      });
    });

    it('a savepoint made and rolled back through run undoes the writes after it, and keeps those before', async () => {
      await orm.em.transactional(async (em) => {
        await kind.run(em, [`INSERT INTO ${payments} (id, cents) VALUES ('sp-kept', 1)`, 'SAVEPOINT s']);
        await kind.run(em, [`INSERT INTO ${payments} (id, cents) VALUES ('sp-undone', 1)`]);
        await kind.run(em, ['ROLLBACK TO SAVEPOINT s', 'RELEASE SAVEPOINT s']);
        const [seen] = await kind.run(em, [`SELECT id FROM ${payments} WHERE id LIKE 'sp-%' ORDER BY id`]);
        expect(seen).toEqual([{ id: 'sp-kept' }]);
      });
      expect(await count('sp-kept')).toBe(1);
      expect(await count('sp-undone')).toBe(0);
    });

    it('on the global em outside a transaction, runs in autocommit', async () => {
      await kind.run(orm.em, [`INSERT INTO ${payments} (id, cents) VALUES ('auto-em', 1)`, 'SELECT 1 AS a']);
      expect(await count('auto-em')).toBe(1);
    });

    it("refuses a fork whose transaction has ended (Knex's transaction is complete); nothing runs", async () => {
      let ended: EntityManager | undefined;
      await orm.em.transactional(async (em) => {
        ended = em;
      });
      await expect(
        kind.run(ended!, [`INSERT INTO ${payments} (id, cents) VALUES ('late-1', 1)`]),
      ).rejects.toThrow(/complete/);
      expect(await count('late-1')).toBe(0);
    });
  });

  it("after its transaction, a flush through the fork fails (Knex's transaction is complete): what a handler past its lease meets", async () => {
    let ended: EntityManager | undefined;
    await orm.em.transactional(async (em) => {
      ended = em;
    });
    await expect(
      ended!.persist(ended!.create(PaymentEntity, { id: 'late-2', cents: 1 })).flush(),
    ).rejects.toThrow(/complete/);
    expect(await count('late-2')).toBe(0);
  });

  describe('inTransaction', () => {
    it("is true for the transaction's fork, false for the global em and for the fork after its transaction", async () => {
      let ended: EntityManager | undefined;
      await orm.em.transactional(async (em) => {
        expect(kind.inTransaction(em)).toBe(true);
        ended = em;
      });
      // MikroORM itself still says true: the fork keeps its (completed) transaction context.
      expect(ended!.isInTransaction()).toBe(true);
      expect(kind.inTransaction(ended!)).toBe(false);
      expect(kind.inTransaction(orm.em)).toBe(false);
      expect(kind.inTransaction(orm.em.fork())).toBe(false);
    });

    it('is true for a fork the caller began a transaction on by hand, until its commit', async () => {
      const em = orm.em.fork();
      await em.begin();
      expect(kind.inTransaction(em)).toBe(true);
      await em.commit();
      expect(kind.inTransaction(em)).toBe(false);
    });
  });

  describe('is', () => {
    it("is the kind every ORM's objects are told apart by (outbox.add): no other ORM's shape claims these", async () => {
      expect(handleKindOf(orm.em)).toBe(kind);
      await orm.em.transactional(async (em) => {
        expect(handleKindOf(em)).toBe(kind);
      });
    });

    it("recognizes MikroORM's entity managers: the global one, forks, a transaction's", async () => {
      expect(kind.is(orm.em)).toBe(true);
      expect(kind.is(orm.em.fork())).toBe(true);
      await orm.em.transactional(async (em) => {
        expect(kind.is(em)).toBe(true);
      });
    });

    it("rejects other ORMs' objects, pg's clients and look-alikes", async () => {
      const pgPool = new pg.Pool({ connectionString: services.postgres.url });
      const pgClient = new pg.Client({ connectionString: services.postgres.url });
      const kysely = new Kysely({ dialect: new PostgresDialect({ pool: pgPool }) });
      const knexDb = knex({ client: 'pg', connection: services.postgres.url });
      const dataSource = new DataSource({ type: 'postgres', url: services.postgres.url });
      try {
        for (const other of [
          pgPool,
          pgClient,
          kysely,
          knexDb,
          drizzle(pgPool),
          dataSource,
          dataSource.manager,
          orm,
          { isInTransaction: () => true, execute: () => {}, transactional: () => {} },
          null,
          undefined,
          'em',
        ]) {
          expect(kind.is(other)).toBe(false);
        }
      } finally {
        await knexDb.destroy();
        await kysely.destroy();
      }
    });
  });

  describe('stateOf', () => {
    it('finds the SQLSTATE of a unique violation from run, from a flush, and under a cause', async () => {
      await orm.em.transactional(async (em) => {
        await em.persist(em.create(PaymentEntity, { id: 'dup-1', cents: 1 })).flush();
      });
      const fromRun = await kind
        .run(orm.em, [`INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`])
        .catch((error: unknown) => error);
      expect((fromRun as Error).name).toBe('UniqueConstraintViolationException');
      expect(kind.stateOf!(fromRun)).toBe('23505');
      const fork = orm.em.fork();
      const fromFlush = await fork
        .persist(fork.create(PaymentEntity, { id: 'dup-1', cents: 1 }))
        .flush()
        .catch((error: unknown) => error);
      expect(kind.stateOf!(fromFlush)).toBe('23505');
      expect(kind.stateOf!(new Error('wrapped', { cause: fromRun }))).toBe('23505');
    });

    it('finds nothing in an error without one', () => {
      expect(kind.stateOf!(new Error('no state'))).toBeUndefined();
      expect(kind.stateOf!({ code: 'ECONNREFUSED' })).toBeUndefined();
    });
  });

  describe('transaction', () => {
    it("commits when the work resolves, and resolves with the work's value", async () => {
      const value = await driver().transaction(
        async (em) => {
          await em.persist(em.create(PaymentEntity, { id: 'tx-commit', cents: 1 })).flush();
          return 'done';
        },
        { isolation: 'read committed', timeoutMs: 1_000 },
      );
      expect(value).toBe('done');
      expect(await count('tx-commit')).toBe(1);
    });

    it("rolls back when the work rejects, and rejects with the work's error", async () => {
      const failure = new Error('card declined');
      await expect(
        driver().transaction(
          async (em) => {
            await em.persist(em.create(PaymentEntity, { id: 'tx-rollback', cents: 1 })).flush();
            throw failure;
          },
          { isolation: 'read committed', timeoutMs: 1_000 },
        ),
      ).rejects.toBe(failure);
      expect(await count('tx-rollback')).toBe(0);
    });

    it('flushes what the work persisted (and never flushed) before the COMMIT; a rejection drops it', async () => {
      const sent = countSent();
      try {
        await driver().transaction(
          async (em) => {
            em.persist(em.create(PaymentEntity, { id: 'tx-unflushed', cents: 1 }));
          },
          { isolation: 'read committed', timeoutMs: 1_000 },
        );
        const texts = textsOf(sent);
        const insert = texts.findIndex((text) => text.includes('orm_payments'));
        expect(insert).toBeGreaterThan(0);
        expect(texts.slice(insert + 1)).toEqual(['COMMIT;']);
      } finally {
        sent.mockRestore();
      }
      expect(await count('tx-unflushed')).toBe(1);
      await expect(
        driver().transaction(
          async (em) => {
            em.persist(em.create(PaymentEntity, { id: 'tx-unflushed-dropped', cents: 1 }));
            throw new Error('declined');
          },
          { isolation: 'read committed', timeoutMs: 1_000 },
        ),
      ).rejects.toThrow('declined');
      expect(await count('tx-unflushed-dropped')).toBe(0);
    });

    it.each(['read committed', 'repeatable read', 'serializable'] as const)(
      'applies the isolation level %s',
      async (isolation) => {
        const seen = await driver().transaction(
          async (em) => {
            const [[row]] = (await kind.run(em, [
              "SELECT current_setting('transaction_isolation') AS level",
            ])) as [[{ level: string }]];
            return row.level;
          },
          { isolation, timeoutMs: 1_000 },
        );
        expect(seen).toBe(isolation);
      },
    );

    it("opens a transaction of its own even inside the caller's em.transactional (which MikroORM would nest)", async () => {
      await orm.em.transactional(async (outer) => {
        const [[{ xid: outerXid }]] = (await kind.run(outer, ['SELECT txid_current()::text AS xid'])) as [
          [{ xid: string }],
        ];
        const inner = await driver().transaction(
          async (em) => {
            const [[row]] = (await kind.run(em, [
              "SELECT txid_current()::text AS xid, current_setting('transaction_isolation') AS level",
            ])) as [[{ xid: string; level: string }]];
            return row;
          },
          { isolation: 'serializable', timeoutMs: 1_000 },
        );
        expect(inner.xid).not.toBe(outerXid);
        expect(inner.level).toBe('serializable');
      });
    });

    it('refuses to run the work when MikroORM opens no transaction (disableTransactions)', async () => {
      const untransacted = await mikroOrmOn(schema, 2, { disableTransactions: true });
      try {
        const work = vi.fn(async () => {});
        await expect(
          mikroOrmDriver(untransacted.em).transaction(work, {
            isolation: 'read committed',
            timeoutMs: 1_000,
          }),
        ).rejects.toThrow(/disableTransactions/);
        expect(work).not.toHaveBeenCalled();
      } finally {
        await untransacted.close();
      }
    });

    it('rejects when the COMMIT fails, and nothing is kept', async () => {
      await pool.query(`CREATE TABLE IF NOT EXISTS "${schema}".deferred_check (id int PRIMARY KEY,
        other int REFERENCES "${schema}".deferred_check (id) DEFERRABLE INITIALLY DEFERRED)`);
      const failed = await driver()
        .transaction(
          async (em) => {
            await em.persist(em.create(PaymentEntity, { id: 'tx-commit-fails', cents: 1 })).flush();
            await em.execute(`INSERT INTO "${schema}".deferred_check VALUES (1, 99)`);
          },
          { isolation: 'read committed', timeoutMs: 1_000 },
        )
        .catch((error: unknown) => error);
      expect(failed).toMatchObject({ code: '23503' });
      expect(await count('tx-commit-fails')).toBe(0);
    });
  });

  describe('driver.run (autocommit, on the pool)', () => {
    it("commits each statement on its own, outside any transaction, even inside the caller's transactional", async () => {
      await orm.em
        .transactional(async () => {
          const rows = await driver().run([
            `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1) RETURNING id`,
            'SELECT 1 AS a',
          ]);
          expect(rows).toEqual([[{ id: 'auto-1' }], [{ a: 1 }]]);
          throw new Error('the caller rolls back');
        })
        .catch(() => {});
      expect(await count('auto-1')).toBe(1);
    });
  });

  describe('MikroOrmStore', () => {
    it('takes { orm } or { em }, and refuses anything else', () => {
      expect(new MikroOrmStore({ orm, schema })).toBeInstanceOf(MikroOrmStore);
      expect(new MikroOrmStore({ em: orm.em, schema })).toBeInstanceOf(MikroOrmStore);
      for (const options of [{}, { orm: {} }, { em: pool }, { orm: orm.em }]) {
        expect(() => new MikroOrmStore(options as { em: EntityManager })).toThrow(InvalidOptionsError);
      }
    });

    it('what the handler persisted commits with the key, and rolls back with it', async () => {
      const store = new MikroOrmStore({ orm, schema });
      let fail = true;
      const pay = idempotent(
        async (id: string, context) => {
          const em = store.transactionOf(context);
          em.persist(em.create(PaymentEntity, { id, cents: 1 }));
          if (fail) throw new Error('declined');
          return id;
        },
        { store, scope: 'persisted', key: (id) => id },
      );
      await expect(pay.execute('persisted-1')).rejects.toThrow('declined');
      expect(await count('persisted-1')).toBe(0);
      expect(await store.get('fn:persisted:persisted-1')).toBeUndefined();
      fail = false;
      expect(await pay.execute('persisted-1')).toEqual({ value: 'persisted-1', replayed: false });
      expect(await count('persisted-1')).toBe(1);
    });

    it('a claim costs four round trips of its own: BEGIN, the claim, the outcome, COMMIT', async () => {
      const store = new MikroOrmStore({ orm, schema });
      const pay = idempotent(
        async (id: string, context) => {
          const em = store.transactionOf(context);
          em.persist(em.create(PaymentEntity, { id, cents: 1 }));
          return id;
        },
        { store, scope: 'round-trips', key: (id) => id },
      );
      await pay.execute('rt-warm');
      const sent = countSent();
      try {
        await pay.execute('rt-1');
        const texts = textsOf(sent);
        // The handler's entity is flushed with its own insert, just before the outcome's statement.
        expect(texts).toHaveLength(5);
        // The database's isolation level (the store's default): a plain BEGIN.
        expect(texts[0]).toBe('BEGIN;');
        expect(texts[2]).toContain('orm_payments');
        expect(texts[3]).toContain('oncely_keys');
        expect(texts[4]).toBe('COMMIT;');
      } finally {
        sent.mockRestore();
      }
      expect(await count('rt-1')).toBe(1);
    });

    it('a joined claim costs three round trips: the savepoint with the claim, the outcome, the release', async () => {
      const store = new MikroOrmStore({ orm, schema });
      await orm.em.transactional(async (em) => {
        const pay = idempotent(async (id: string) => id, {
          store: store.join(em),
          scope: 'round-trips-joined',
          key: (id) => id,
        });
        const sent = countSent();
        try {
          await pay.execute('rtj-1');
          const texts = textsOf(sent);
          expect(texts).toHaveLength(3);
          expect(texts[0]).toMatch(/^SAVEPOINT oncely_claim\n;\n/);
          expect(texts[2]).toBe('RELEASE SAVEPOINT oncely_claim');
        } finally {
          sent.mockRestore();
        }
      });
    });

    it("joined: what a failed handler persisted without flushing stays out of the caller's commit", async () => {
      const store = new MikroOrmStore({ orm, schema });
      await orm.em.transactional(async (em) => {
        // The caller's own entity, persisted before the call: flushed before the savepoint, so it stays the caller's.
        em.persist(em.create(PaymentEntity, { id: 'jp-caller', cents: 1 }));
        const pay = idempotent(
          async (id: string, context) => {
            const trx = store.transactionOf(context);
            trx.persist(trx.create(PaymentEntity, { id, cents: 1 }));
            throw new Error('declined');
          },
          { store: store.join(em), scope: 'joined-persisted', key: (id) => id },
        );
        await expect(pay.execute('jp-1')).rejects.toThrow('declined');
      });
      expect(await count('jp-1')).toBe(0);
      expect(await count('jp-caller')).toBe(1);
    });
  });
});
