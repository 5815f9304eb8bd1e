/**
 * The TypeORM driver on its own, against PostgreSQL: how oncely's statements reach a transaction's connection (all
 * in one message, each statement's rows back), how it recognizes TypeORM's objects, finds a failure's SQLSTATE, and
 * opens transactions through `dataSource.transaction`.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { drizzle } from 'drizzle-orm/node-postgres';
import knex from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import {
  DataSource,
  type EntityManager,
  type Logger,
  QueryFailedError,
  QueryRunnerAlreadyReleasedError,
} from 'typeorm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError, idempotent } from '../../../src/index.js';
import type { SqlDriver } from '../../../src/orm/driver.js';
import { handleKindOf } from '../../../src/orm/handles.js';
import { typeormDriver } from '../../../src/orm/typeorm/driver.js';
import { TypeOrmStore, typeormTransactions } from '../../../src/orm/typeorm/index.js';
import { requireService, services } from '../../support/services.js';
import { dataSourceOn, freshSchema, PaymentEntity } from './fixture.js';

const kind = typeormTransactions;

describe('TypeORM driver', () => {
  let schema: string;
  let dataSource: DataSource;
  let pool: pg.Pool;
  let payments: string;

  beforeAll(async () => {
    await requireService('postgres');
    schema = await freshSchema('driver');
    dataSource = await dataSourceOn(schema);
    pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
    payments = `"${schema}".orm_payments`;
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  const count = async (id: string) =>
    Number((await pool.query(`SELECT count(*) FROM ${payments} WHERE id = $1`, [id])).rows[0].count);
  /** The pg connection under a transaction's manager, its `query` counted: one call is one round trip. */
  const countedConnection = async (manager: EntityManager) => {
    const connection = (await manager.queryRunner!.connect()) as pg.PoolClient;
    return vi.spyOn(connection, 'query');
  };

  describe('run', () => {
    it("sends several statements in one message and returns each one's rows, in order", async () => {
      await dataSource.transaction(async (manager) => {
        const sent = await countedConnection(manager);
        const rows = await kind.run(manager, [
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
        sent.mockRestore();
      });
      expect(await count('run-1')).toBe(1);
    });

    it('one statement comes back as one result', async () => {
      await dataSource.transaction(async (manager) => {
        expect(await kind.run(manager, ["SELECT 'only' AS one"])).toEqual([[{ one: 'only' }]]);
        expect(await kind.run(manager, [])).toEqual([]);
      });
    });

    it('leaves the text as written: question marks, dollar numbers and backslashes are not placeholders', async () => {
      const text = String.raw`SELECT '?' AS q, '??' AS qq, '\?' AS escaped, '$1' AS dollar, E'a\\b' AS backslash`;
      await dataSource.transaction(async (manager) => {
        expect(await kind.run(manager, [text, 'SELECT 1 AS n'])).toEqual([
          [{ q: '?', qq: '??', escaped: '\\?', dollar: '$1', backslash: 'a\\b' }],
          [{ n: 1 }],
        ]);
      });
    });

    it('refuses statements whose results do not line up (an empty statement has none), naming the counts', async () => {
      await dataSource.transaction(async (manager) => {
        await expect(kind.run(manager, ['SELECT 1 AS a', ''])).rejects.toThrow(
          /2 statements came back as 1 results/,
        );
      });
    });

    it('a savepoint made and rolled back through run undoes the writes after it, and keeps those before', async () => {
      await dataSource.transaction(async (manager) => {
        await kind.run(manager, [`INSERT INTO ${payments} (id, cents) VALUES ('sp-kept', 1)`, 'SAVEPOINT s']);
        await kind.run(manager, [`INSERT INTO ${payments} (id, cents) VALUES ('sp-undone', 1)`]);
        await kind.run(manager, ['ROLLBACK TO SAVEPOINT s', 'RELEASE SAVEPOINT s']);
        const [seen] = await kind.run(manager, [
          `SELECT id FROM ${payments} WHERE id LIKE 'sp-%' ORDER BY id`,
        ]);
        expect(seen).toEqual([{ id: 'sp-kept' }]);
      });
      expect(await count('sp-kept')).toBe(1);
      expect(await count('sp-undone')).toBe(0);
    });

    it("refuses a manager whose transaction has ended: its connection is back in the pool, maybe another's", async () => {
      let ended: EntityManager | undefined;
      await dataSource.transaction(async (manager) => {
        ended = manager;
      });
      await expect(
        kind.run(ended!, [`INSERT INTO ${payments} (id, cents) VALUES ('late-1', 1)`]),
      ).rejects.toThrow(/released/);
      expect(await count('late-1')).toBe(0);
    });

    it('after its transaction, TypeORM itself refuses writes through the manager (what a handler past its lease meets)', async () => {
      let ended: EntityManager | undefined;
      await dataSource.transaction(async (manager) => {
        ended = manager;
      });
      await expect(ended!.insert(PaymentEntity, { id: 'late-2', cents: 1 })).rejects.toThrow(
        QueryRunnerAlreadyReleasedError,
      );
      expect(await count('late-2')).toBe(0);
    });

    it('on a manager or the data source outside a transaction, runs on a connection of its own and returns it', async () => {
      const pooled = (dataSource.driver as unknown as { master: pg.Pool }).master;
      expect(await kind.run(dataSource.manager, ['SELECT 1 AS a', 'SELECT 2 AS b'])).toEqual([
        [{ a: 1 }],
        [{ b: 2 }],
      ]);
      expect(await kind.run(dataSource as unknown as EntityManager, ['SELECT 3 AS c'])).toEqual([[{ c: 3 }]]);
      expect(pooled.idleCount).toBe(pooled.totalCount);
    });

    it("logs the statements through the data source's logger, as TypeORM's own queries are", async () => {
      const logged: string[] = [];
      const failed: string[] = [];
      const logger: Logger = {
        logQuery: (query) => void logged.push(query),
        logQueryError: (_error, query) => void failed.push(query),
        logQuerySlow: () => {},
        logSchemaBuild: () => {},
        logMigration: () => {},
        log: () => {},
      };
      const logging = new DataSource({ ...dataSource.options, logger } as typeof dataSource.options);
      await logging.initialize();
      try {
        await logging.transaction(async (manager) => {
          logged.length = 0;
          await kind.run(manager, ['SELECT 1 AS a', 'SELECT 2 AS b']);
          expect(logged).toEqual(['SELECT 1 AS a\n;\nSELECT 2 AS b']);
          await kind.run(manager, ['SELECT 1/0']).catch(() => {});
          expect(failed).toEqual(['SELECT 1/0']);
        });
      } finally {
        await logging.destroy();
      }
    });
  });

  describe('inTransaction', () => {
    it("is true for the transaction's manager, false outside and after it", async () => {
      let ended: EntityManager | undefined;
      await dataSource.transaction(async (manager) => {
        expect(kind.inTransaction(manager)).toBe(true);
        ended = manager;
      });
      expect(kind.inTransaction(ended!)).toBe(false);
      expect(kind.inTransaction(dataSource.manager)).toBe(false);
      expect(kind.inTransaction(dataSource as unknown as EntityManager)).toBe(false);
    });

    it('is true for a query runner the caller started a transaction on by hand', async () => {
      const runner = dataSource.createQueryRunner();
      try {
        expect(kind.inTransaction(runner.manager)).toBe(false);
        await runner.startTransaction();
        expect(kind.inTransaction(runner.manager)).toBe(true);
        await runner.rollbackTransaction();
        expect(kind.inTransaction(runner.manager)).toBe(false);
      } finally {
        await runner.release();
      }
    });

    it('is false for a runner released with its transaction open (its connection failed, or was let go)', async () => {
      const runner = dataSource.createQueryRunner();
      await runner.startTransaction();
      await runner.release();
      expect(runner.isTransactionActive).toBe(true);
      expect(kind.inTransaction(runner.manager)).toBe(false);
    });
  });

  describe('is', () => {
    it("is the kind every ORM's objects are told apart by (outbox.add): no other ORM's shape claims these", async () => {
      expect(handleKindOf(dataSource)).toBe(kind);
      expect(handleKindOf(dataSource.manager)).toBe(kind);
      await dataSource.transaction(async (manager) => {
        expect(handleKindOf(manager)).toBe(kind);
      });
    });

    it("recognizes TypeORM's managers and its data source", async () => {
      expect(kind.is(dataSource.manager)).toBe(true);
      expect(kind.is(dataSource)).toBe(true);
      await dataSource.transaction(async (manager) => {
        expect(kind.is(manager)).toBe(true);
      });
    });

    it("rejects other ORMs' objects, pg's clients and look-alikes", async () => {
      const pgPool = new pg.Pool({ connectionString: services.postgres.url });
      const pgClient = new pg.Client({ connectionString: services.postgres.url });
      const kysely = new Kysely({ dialect: new PostgresDialect({ pool: pgPool }) });
      const knexDb = knex({ client: 'pg', connection: services.postgres.url });
      const orm = await MikroORM.init({
        clientUrl: services.postgres.url,
        connect: false,
        entities: [],
        discovery: { warnWhenNoEntities: false },
      });
      try {
        for (const other of [
          pgPool,
          pgClient,
          kysely,
          knexDb,
          drizzle(pgPool),
          orm,
          orm.em,
          { query: () => {}, transaction: () => {} },
          { '@instanceof': Symbol.for('MongoEntityManager'), query: () => {}, transaction: () => {} },
          { '@instanceof': Symbol.for('EntityManager') },
          null,
          undefined,
          'EntityManager',
        ]) {
          expect(kind.is(other)).toBe(false);
        }
      } finally {
        await orm.close();
        await knexDb.destroy();
        await kysely.destroy();
      }
    });
  });

  describe('stateOf', () => {
    it("finds the SQLSTATE of a unique violation from run, from TypeORM's QueryFailedError, and under a cause", async () => {
      await expect(
        dataSource.transaction(async (manager) => {
          await manager.insert(PaymentEntity, { id: 'dup-1', cents: 1 });
          const fromRun = await kind
            .run(manager, ['SAVEPOINT d', `INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`])
            .catch((error: unknown) => error);
          expect(kind.stateOf!(fromRun)).toBe('23505');
          await kind.run(manager, ['ROLLBACK TO SAVEPOINT d']);
          const fromQuery = await manager
            .query(`INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`)
            .catch((error: unknown) => error);
          expect(fromQuery).toBeInstanceOf(QueryFailedError);
          expect(kind.stateOf!(fromQuery)).toBe('23505');
          expect(kind.stateOf!({ driverError: { code: '23505' } })).toBe('23505');
          expect(kind.stateOf!(new Error('wrapped', { cause: fromQuery }))).toBe('23505');
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
    });

    it('finds nothing in an error without one', () => {
      expect(kind.stateOf!(new Error('no state'))).toBeUndefined();
      expect(kind.stateOf!({ code: 'ECONNREFUSED' })).toBeUndefined();
      expect(kind.stateOf!('23505')).toBeUndefined();
    });
  });

  describe('transaction', () => {
    const driver = () => typeormDriver(dataSource) as SqlDriver<EntityManager>;

    it("commits when the work resolves, and resolves with the work's value", async () => {
      const value = await driver().transaction(
        async (manager) => {
          await manager.insert(PaymentEntity, { id: 'tx-commit', cents: 1 });
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
          async (manager) => {
            await manager.insert(PaymentEntity, { id: 'tx-rollback', cents: 1 });
            throw failure;
          },
          { isolation: 'read committed', timeoutMs: 1_000 },
        ),
      ).rejects.toBe(failure);
      expect(await count('tx-rollback')).toBe(0);
    });

    it.each(['read committed', 'repeatable read', 'serializable'] as const)(
      'applies the isolation level %s',
      async (isolation) => {
        const seen = await driver().transaction(
          async (manager) => {
            const [[row]] = (await kind.run(manager, [
              "SELECT current_setting('transaction_isolation') AS level",
            ])) as [[{ level: string }]];
            return row.level;
          },
          { isolation, timeoutMs: 1_000 },
        );
        expect(seen).toBe(isolation);
      },
    );

    it('rejects when the COMMIT fails, and nothing is kept', async () => {
      await pool.query(`CREATE TABLE IF NOT EXISTS "${schema}".deferred_check (id int PRIMARY KEY,
        other int REFERENCES "${schema}".deferred_check (id) DEFERRABLE INITIALLY DEFERRED)`);
      await expect(
        driver().transaction(
          async (manager) => {
            await manager.insert(PaymentEntity, { id: 'tx-commit-fails', cents: 1 });
            await manager.query(`INSERT INTO "${schema}".deferred_check VALUES (1, 99)`);
          },
          { isolation: 'read committed', timeoutMs: 1_000 },
        ),
      ).rejects.toMatchObject({ code: '23503' });
      expect(await count('tx-commit-fails')).toBe(0);
    });
  });

  describe('driver.run (autocommit, on the pool)', () => {
    it('commits each statement on its own, outside any transaction', async () => {
      const rows = await (typeormDriver(dataSource) as SqlDriver<EntityManager>).run([
        `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1) RETURNING id`,
        "SELECT current_setting('transaction_isolation') AS level",
      ]);
      expect(rows[0]).toEqual([{ id: 'auto-1' }]);
      expect(await count('auto-1')).toBe(1);
      const pooled = (dataSource.driver as unknown as { master: pg.Pool }).master;
      expect(pooled.idleCount).toBe(pooled.totalCount);
    });
  });

  describe('TypeOrmStore', () => {
    it('refuses anything but a TypeORM data source of type postgres, mysql or mariadb', () => {
      // CockroachDB speaks PostgreSQL's protocol on the pg driver, but is a type oncely has no statements for.
      const cockroach = new DataSource({ type: 'cockroachdb', host: '127.0.0.1', timeTravelQueries: false });
      for (const options of [
        {},
        { dataSource: pool },
        { dataSource: dataSource.manager },
        { dataSource: cockroach },
      ]) {
        expect(() => new TypeOrmStore(options as { dataSource: DataSource })).toThrow(InvalidOptionsError);
      }
      expect(() => new TypeOrmStore({ dataSource: cockroach })).toThrow(/type 'cockroachdb'/);
    });

    it('a claim costs four round trips of its own: TypeORM opens with one, one claims, one completes, one commits', async () => {
      const store = new TypeOrmStore({ dataSource, schema });
      const pay = idempotent(
        async (id: string, context) => {
          await store.transactionOf(context).insert(PaymentEntity, { id, cents: 1 });
          return id;
        },
        { store, scope: 'round-trips', key: (id) => id },
      );
      await pay.execute('rt-warm');
      const sent = vi.spyOn(pg.Client.prototype, 'query');
      try {
        await pay.execute('rt-1');
        const texts = sent.mock.calls.map(([query]) =>
          String(typeof query === 'string' ? query : (query as { text: string }).text),
        );
        // The handler's own insert is the fifth. With the database's isolation level (the store's default) TypeORM
        // sends no SET TRANSACTION; an explicit level would cost that one more message.
        expect(texts.filter((text) => !text.includes('orm_payments'))).toHaveLength(4);
        expect(texts).toHaveLength(5);
        expect(texts[0]).toBe('START TRANSACTION');
        expect(texts.at(-1)).toBe('COMMIT');
      } finally {
        sent.mockRestore();
      }
      expect(await count('rt-1')).toBe(1);
    });

    it('a joined claim costs three round trips: the savepoint with the claim, the outcome, the release', async () => {
      const store = new TypeOrmStore({ dataSource, schema });
      const sent = vi.spyOn(pg.Client.prototype, 'query');
      try {
        await dataSource.transaction(async (manager) => {
          const pay = idempotent(async (id: string) => id, {
            store: store.join(manager),
            scope: 'round-trips-joined',
            key: (id) => id,
          });
          sent.mockClear();
          await pay.execute('rtj-1');
          const texts = sent.mock.calls.map(([query]) => String(query));
          expect(texts).toHaveLength(3);
          expect(texts[0]).toMatch(/^SAVEPOINT oncely_claim\n;\n/);
          expect(texts[2]).toBe('RELEASE SAVEPOINT oncely_claim');
        });
      } finally {
        sent.mockRestore();
      }
    });
  });
});
