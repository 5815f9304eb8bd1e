/**
 * The Drizzle driver on its own, against PostgreSQL, on both drivers Drizzle runs on here (node-postgres on a pg
 * Pool, postgres.js): how oncely's statements reach a transaction's connection (all in one message, counted on the
 * wire, each statement's rows back), how it recognizes Drizzle's objects, finds a failure's SQLSTATE under
 * Drizzle's wrapping, and opens transactions through `db.transaction`.
 */
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { withReplicas } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import knex from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, idempotent } from '../../../src/index.js';
import type { RawRow, SqlDriver } from '../../../src/orm/driver.js';
import {
  DrizzleStore,
  type DrizzleTransactionOf,
  drizzleDriver,
  drizzleTransactions,
} from '../../../src/orm/drizzle/index.js';
import { handleKindOf } from '../../../src/orm/handles.js';
import { normalizeRow } from '../../../src/orm/rows.js';
import { requireService, services } from '../../support/services.js';
import { startWireCounter, type WireCounter } from '../postgres-js/wire-counter.js';
import { committedPayments, freshSchema } from '../support/schema.js';
import { type DrizzleDb, tablesIn } from './world.js';

const kind = drizzleTransactions;
const options = { isolation: 'read committed', timeoutMs: 1_000 } as const;

/** One of the drivers under Drizzle: a db on `url` with the suite's tables in `schema`, and how to end it. */
interface Underneath {
  readonly name: 'node-postgres' | 'postgres-js';
  open(url: string, schema: string): { db: DrizzleDb; end(): Promise<void> };
  /** The round trips of a claim of oncely's own in a serializable transaction, and how it opens. */
  readonly serializableClaim: { readonly trips: number; readonly opens: readonly string[] };
}

const drivers: readonly Underneath[] = [
  {
    name: 'node-postgres',
    open(url, schema) {
      const pool = new pg.Pool({ connectionString: url, max: 4 });
      return { db: drizzleNodePg({ client: pool, schema: tablesIn(schema) }), end: () => pool.end() };
    },
    // Drizzle opens with `begin isolation level …` in one statement.
    serializableClaim: { trips: 4, opens: ['begin isolation level serializable'] },
  },
  {
    name: 'postgres-js',
    open(url, schema) {
      const client = postgres(url, { max: 4, onnotice: () => {} });
      return { db: drizzlePostgresJs({ client, schema: tablesIn(schema) }), end: () => client.end() };
    },
    // postgres.js's `begin` (as it writes it), then Drizzle's `set transaction isolation level …`: one round trip more.
    serializableClaim: { trips: 5, opens: ['begin ', 'set transaction isolation level serializable'] },
  },
];

describe.each(drivers)('Drizzle driver on $name', (underneath) => {
  let schema: string;
  let db: DrizzleDb;
  let end: () => Promise<void>;
  let wire: WireCounter;
  let counted: { db: DrizzleDb; end(): Promise<void> };
  let committed: ReturnType<typeof committedPayments>;
  let payments: string;

  beforeAll(async () => {
    await requireService('postgres');
    schema = await freshSchema('drizzle', `driver_${underneath.name.replace('-', '_')}`);
    ({ db, end } = underneath.open(services.postgres.url, schema));
    wire = await startWireCounter();
    counted = underneath.open(wire.url, schema);
    committed = committedPayments(schema);
    payments = `"${schema}".orm_payments`;
  });
  afterAll(async () => {
    await counted?.end();
    await wire?.close();
    await end?.();
    await committed?.end(true);
  });

  const count = (id: string) => committed.count(id);
  const tables = () => tablesIn(schema);

  describe('run', () => {
    it("sends several statements in one message and returns each one's rows, in order, those without rows too", async () => {
      await counted.db.transaction(async (tx) => {
        wire.reset();
        const rows = await kind.run(tx, [
          'SAVEPOINT s',
          'SELECT 1 AS a',
          "SET LOCAL lock_timeout = '5s'",
          "SELECT 'x' AS b, 2 AS c UNION ALL SELECT 'y', 3",
          'SELECT 1 AS none WHERE false',
          `INSERT INTO ${payments} (id, cents) VALUES ('run-0', 4)`,
          `INSERT INTO ${payments} (id, cents) VALUES ('run-1', 5) RETURNING id, cents`,
          'RELEASE SAVEPOINT s',
        ]);
        expect(rows).toEqual([
          [],
          [{ a: 1 }],
          [],
          [
            { b: 'x', c: 2 },
            { b: 'y', c: 3 },
          ],
          [],
          [],
          [{ id: 'run-1', cents: 5 }],
          [],
        ]);
        expect(wire.sent).toHaveLength(1);
        expect(wire.sent[0]?.protocol).toBe('simple');
      });
      expect(await count('run-1')).toBe(1);
    });

    it("a text of several statements answers with its last one's rows; a trailing ';' or '--' comment is harmless", async () => {
      await db.transaction(async (tx) => {
        expect(
          await kind.run(tx, [
            'SELECT 1 AS a; SELECT 2 AS b',
            'SELECT 3 AS c;',
            'SELECT 4 AS d -- a comment to the end of the line',
            'SAVEPOINT t; SELECT 5 AS e; RELEASE SAVEPOINT t',
          ]),
        ).toEqual([[{ b: 2 }], [{ c: 3 }], [{ d: 4 }], [{ e: 5 }]]);
      });
    });

    it('one statement goes as written; none sends nothing', async () => {
      await counted.db.transaction(async (tx) => {
        wire.reset();
        expect(await kind.run(tx, ["SELECT 'only' AS one"])).toEqual([[{ one: 'only' }]]);
        expect(await kind.run(tx, [])).toEqual([]);
        expect(wire.sent).toEqual([{ protocol: 'simple', text: "SELECT 'only' AS one" }]);
      });
    });

    it('leaves the text as written: question marks, dollar numbers and backslashes are not placeholders', async () => {
      const text = String.raw`SELECT '?' AS q, '$1' AS dollar, E'a\\b' AS backslash`;
      await db.transaction(async (tx) => {
        expect(await kind.run(tx, [text, 'SELECT 1 AS n'])).toEqual([
          [{ q: '?', dollar: '$1', backslash: 'a\\b' }],
          [{ n: 1 }],
        ]);
      });
    });

    it('hands values over as the driver parses them (int8 as text, bytea as a Buffer); normalizeRow fixes them', async () => {
      const [[raw]] = (await db.transaction((tx) =>
        kind.run(tx, ["SELECT 9007199254740991::bigint AS token, '\\x0102'::bytea AS body, true AS held"]),
      )) as [[RawRow]];
      expect(raw).toEqual({ token: '9007199254740991', body: Buffer.from([1, 2]), held: true });
      expect(normalizeRow(raw)).toEqual({ token: 9007199254740991, body: Buffer.from([1, 2]), held: true });
    });

    it('a savepoint made and rolled back through run undoes the writes after it, and keeps those before', async () => {
      await db.transaction(async (tx) => {
        await kind.run(tx, [`INSERT INTO ${payments} (id, cents) VALUES ('sp-kept', 1)`, 'SAVEPOINT s']);
        await tx.insert(tables().payments).values({ id: 'sp-undone', cents: 1 });
        await kind.run(tx, ['ROLLBACK TO SAVEPOINT s', 'RELEASE SAVEPOINT s']);
        const [seen] = await kind.run(tx, [`SELECT id FROM ${payments} WHERE id LIKE 'sp-%' ORDER BY id`]);
        expect(seen).toEqual([{ id: 'sp-kept' }]);
      });
      expect(await count('sp-kept')).toBe(1);
      expect(await count('sp-undone')).toBe(0);
    });
  });

  describe('inTransaction', () => {
    it('is true for the transaction and a nested one (a savepoint), false for the db', async () => {
      expect(kind.inTransaction(db)).toBe(false);
      await db.transaction(async (tx) => {
        expect(kind.inTransaction(tx)).toBe(true);
        await tx.transaction(async (nested) => {
          expect(kind.inTransaction(nested)).toBe(true);
        });
      });
    });
  });

  describe('a transaction whose callback has finished', () => {
    it('still says it is in a transaction, and a statement on it runs outside any, committing on its own', async () => {
      let ended: DrizzleTransactionOf<DrizzleDb> | undefined;
      await db.transaction(async (tx) => {
        ended = tx;
      });
      // Drizzle keeps no state on the object: what docs/orm/drizzle.md warns about.
      expect(kind.inTransaction(ended!)).toBe(true);
      await kind.run(ended!, [`INSERT INTO ${payments} (id, cents) VALUES ('late-1', 1)`]);
      expect(await count('late-1')).toBe(1);
    });
  });

  describe('is', () => {
    it("is the kind every ORM's objects are told apart by (outbox.add): no other ORM's shape claims these", async () => {
      expect(handleKindOf(db)).toBe(kind);
      await db.transaction(async (tx) => {
        expect(handleKindOf(tx)).toBe(kind);
        await tx.transaction(async (nested) => {
          expect(handleKindOf(nested)).toBe(kind);
        });
      });
    });

    it("recognizes Drizzle's db and its transactions", async () => {
      expect(kind.is(db)).toBe(true);
      await db.transaction(async (tx) => {
        expect(kind.is(tx)).toBe(true);
      });
    });

    it("rejects other ORMs' objects, pg's and postgres.js's clients and look-alikes", async () => {
      const pgPool = new pg.Pool({ connectionString: services.postgres.url });
      const pgClient = new pg.Client({ connectionString: services.postgres.url });
      const sql = postgres(services.postgres.url, { max: 1 });
      const kysely = new Kysely({ dialect: new PostgresDialect({ pool: pgPool }) });
      const knexDb = knex({ client: 'pg', connection: services.postgres.url });
      try {
        for (const other of [
          pgPool,
          pgClient,
          sql,
          kysely,
          knexDb,
          { execute: () => {}, transaction: () => {} },
          null,
          undefined,
          'db',
        ]) {
          expect(kind.is(other)).toBe(false);
        }
      } finally {
        await knexDb.destroy();
        await kysely.destroy();
        await sql.end();
      }
    });
  });

  describe('stateOf', () => {
    it("finds the SQLSTATE of a unique violation under Drizzle's DrizzleQueryError, from run and from tx.insert", async () => {
      await expect(
        db.transaction(async (tx) => {
          await tx.insert(tables().payments).values({ id: 'dup-1', cents: 1 });
          const fromRun = await kind
            .run(tx, ['SAVEPOINT d', `INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`])
            .catch((error: unknown) => error);
          expect(fromRun).toMatchObject({ name: 'Error', cause: { code: '23505' } });
          expect(kind.stateOf(fromRun)).toBe('23505');
          await kind.run(tx, ['ROLLBACK TO SAVEPOINT d']);
          const fromInsert = await tx
            .insert(tables().payments)
            .values({ id: 'dup-1', cents: 1 })
            .catch((error: unknown) => error);
          expect(kind.stateOf(fromInsert)).toBe('23505');
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
    });

    it('finds nothing in an error without one', () => {
      expect(kind.stateOf(new Error('no state'))).toBeUndefined();
      expect(kind.stateOf(new Error('wrapped', { cause: { code: 'ECONNREFUSED' } }))).toBeUndefined();
      expect(kind.stateOf('23505')).toBeUndefined();
    });
  });

  describe('transaction', () => {
    const driver = () => drizzleDriver(db);

    it("commits when the work resolves, and resolves with the work's value", async () => {
      const value = await driver().transaction(async (tx) => {
        await tx.insert(tables().payments).values({ id: 'tx-commit', cents: 1 });
        return 'done';
      }, options);
      expect(value).toBe('done');
      expect(await count('tx-commit')).toBe(1);
    });

    it("rolls back when the work rejects, and rejects with the work's error", async () => {
      const failure = new Error('card declined');
      await expect(
        driver().transaction(async (tx) => {
          await tx.insert(tables().payments).values({ id: 'tx-rollback', cents: 1 });
          throw failure;
        }, options),
      ).rejects.toBe(failure);
      expect(await count('tx-rollback')).toBe(0);
    });

    it.each(['read committed', 'repeatable read', 'serializable'] as const)(
      'applies the isolation level %s',
      async (isolation) => {
        const seen = await driver().transaction(
          async (tx) => {
            const [[row]] = (await kind.run(tx, [
              "SELECT current_setting('transaction_isolation') AS level",
            ])) as [[{ level: string }]];
            return row.level;
          },
          { ...options, isolation },
        );
        expect(seen).toBe(isolation);
      },
    );

    it("with no isolation level asks for none: the database's default, and no statement of its own", async () => {
      const seen = await drizzleDriver(counted.db).transaction(
        async (tx) => {
          const [[row]] = (await kind.run(tx, [
            "SELECT current_setting('transaction_isolation') AS level",
          ])) as [[{ level: string }]];
          return row.level;
        },
        { ...options, isolation: undefined },
      );
      expect(seen).toBe('read committed');
      const opened = wire.sent.map((query) => query.text).slice(-3);
      // Drizzle's BEGIN (postgres.js writes its own as `begin `), the SELECT, the COMMIT: no SET TRANSACTION.
      expect(opened[0]?.trim()).toBe('begin');
      expect(opened.slice(1).map((text) => text.split(' ')[0])).toEqual(['SELECT', 'commit']);
    });

    it('rejects when the COMMIT fails, and nothing is kept', async () => {
      await db.execute(`CREATE TABLE IF NOT EXISTS "${schema}".deferred_check (id int PRIMARY KEY,
        other int REFERENCES "${schema}".deferred_check (id) DEFERRABLE INITIALLY DEFERRED)`);
      const failed = await driver()
        .transaction(async (tx) => {
          await tx.insert(tables().payments).values({ id: 'tx-commit-fails', cents: 1 });
          await tx.execute(`INSERT INTO "${schema}".deferred_check VALUES (1, 99)`);
        }, options)
        .catch((error: unknown) => error);
      expect(kind.stateOf(failed)).toBe('23503');
      expect(await count('tx-commit-fails')).toBe(0);
    });
  });

  describe('driver.run (autocommit, on the pool)', () => {
    it('commits each statement on its own: a later one failing keeps the earlier', async () => {
      const failed = await (drizzleDriver(db) as SqlDriver<unknown>)
        .run([
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1) RETURNING id`,
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1)`,
        ])
        .catch((error: unknown) => error);
      expect(kind.stateOf(failed)).toBe('23505');
      expect(await count('auto-1')).toBe(1);
    });

    it("returns each statement's rows", async () => {
      expect(
        await (drizzleDriver(db) as SqlDriver<unknown>).run([
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-2', 1) RETURNING id`,
          "SELECT current_setting('transaction_isolation') AS level",
          'SELECT 1 AS none WHERE false',
        ]),
      ).toEqual([[{ id: 'auto-2' }], [{ level: 'read committed' }], []]);
    });
  });

  describe('DrizzleStore', () => {
    it('refuses anything but a Drizzle db: other objects, and a transaction', async () => {
      const pgPool = new pg.Pool();
      for (const bad of [null, undefined, {}, pgPool, { execute: () => {}, transaction: () => {} }]) {
        expect(() => new DrizzleStore({ db: bad as unknown as DrizzleDb })).toThrow(InvalidOptionsError);
      }
      await pgPool.end();
      expect(() => new DrizzleStore(null as unknown as { db: DrizzleDb })).toThrow(InvalidOptionsError);
      await db.transaction(async (tx) => {
        expect(() => new DrizzleStore({ db: tx })).toThrow(/db is a transaction/);
      });
    });

    it('on a db made by withReplicas, runs on its $primary (where its transactions go too)', async () => {
      const replicated = withReplicas(db, [db]);
      const store = new DrizzleStore({ db: replicated, schema });
      const pay = idempotent(
        async (id: string, context) => {
          await store.transactionOf(context).insert(tables().payments).values({ id, cents: 1 });
          return id;
        },
        { store, scope: 'replicas', key: (id) => id },
      );
      expect(await pay.execute('rep-1')).toEqual({ value: 'rep-1', replayed: false });
      expect(await pay.execute('rep-1')).toEqual({ value: 'rep-1', replayed: true });
      expect(await count('rep-1')).toBe(1);
    });

    it('types transactionOf(context) as the db’s own transaction, with its schema', () => {
      const store = new DrizzleStore({ db, schema });
      const typed = (context: { transaction?: unknown }) => {
        const tx: DrizzleTransactionOf<typeof db> = store.transactionOf(context);
        // @ts-expect-error: no such column in the schema
        void tx.insert(tables().payments).values({ id: 'x', cent: 1 });
        return tx.query.payments.findMany({ columns: { cents: true } });
      };
      expect(typeof typed).toBe('function');
    });

    /** The queries one new request of `store` sent, after a first request warmed its connections. */
    async function sentByOneClaim(store: DrizzleStore<DrizzleDb>, scope: string): Promise<string[]> {
      const pay = idempotent(
        async (id: string, context) => {
          await store.transactionOf(context).insert(tables().payments).values({ id, cents: 1 });
          return id;
        },
        { store, scope, key: (id) => id },
      );
      await pay.execute(`${scope}-warm`);
      wire.reset();
      await pay.execute(`${scope}-1`);
      expect(await count(`${scope}-1`)).toBe(1);
      return wire.sent.map((query) => query.text);
    }

    it('a claim costs four round trips of its own: BEGIN, the claim, the outcome, COMMIT', async () => {
      const texts = await sentByOneClaim(new DrizzleStore({ db: counted.db, schema }), 'rt');
      // The handler's own insert is the fifth.
      expect(texts.filter((text) => !text.includes('orm_payments'))).toHaveLength(4);
      expect(texts).toHaveLength(5);
      expect(texts[0]?.trim()).toBe('begin');
      expect(texts.at(-1)).toBe('commit');
    });

    it('with an isolation level, Drizzle asks for it: in BEGIN on node-postgres, one round trip more on postgres-js', async () => {
      const store = new DrizzleStore({ db: counted.db, schema, isolation: 'serializable' });
      const texts = await sentByOneClaim(store, 'rt-serializable');
      const { trips, opens } = underneath.serializableClaim;
      expect(texts.filter((text) => !text.includes('orm_payments'))).toHaveLength(trips);
      expect(texts).toHaveLength(trips + 1);
      expect(texts.slice(0, opens.length)).toEqual(opens);
      expect(texts.at(-1)).toBe('commit');
    });

    it('a joined claim costs three round trips: the savepoint with the claim, the outcome, the release', async () => {
      const store = new DrizzleStore({ db: counted.db, schema });
      await counted.db.transaction(async (tx) => {
        const pay = idempotent(async (id: string) => id, {
          store: store.join(tx),
          scope: 'round-trips-joined',
          key: (id) => id,
        });
        wire.reset();
        await pay.execute('rtj-1');
        const texts = wire.sent.map((query) => query.text);
        expect(texts).toHaveLength(3);
        expect(texts[0]).toMatch(/^SAVEPOINT oncely_claim\n;SELECT 1 AS "oncely.statement_boundary";\n/);
        expect(texts[2]).toBe('RELEASE SAVEPOINT oncely_claim');
      });
    });
  });
});

describe('DrizzleStore on what Drizzle connects through', () => {
  it('refuses a node-postgres db on a single pg Client: every transaction would share its one connection', async () => {
    const client = new pg.Client({ connectionString: services.postgres.url });
    expect(() => new DrizzleStore({ db: drizzleNodePg({ client }) })).toThrow(/single pg Client/);
    const pool = new pg.Pool({ connectionString: services.postgres.url });
    expect(() => new DrizzleStore({ db: drizzleNodePg({ client: pool }) })).not.toThrow();
    await pool.end();
  });

  it('refuses a postgres-js db whose sql transforms results (postgres.camel renames the columns oncely reads)', async () => {
    const camel = postgres(services.postgres.url, { max: 1, transform: postgres.camel });
    const plain = postgres(services.postgres.url, { max: 1 });
    try {
      expect(() => new DrizzleStore({ db: drizzlePostgresJs({ client: camel }) })).toThrow(
        /transform of results/,
      );
      expect(() => new DrizzleStore({ db: drizzlePostgresJs({ client: plain }) })).not.toThrow();
    } finally {
      await camel.end();
      await plain.end();
    }
  });

  it('a raw COMMIT written with sql`…` reaches the server through tx.execute, as the suite’s escape uses it', async () => {
    // The suite's rawCommit is `tx.execute(sql\`COMMIT\`)`; this pins that it is a real COMMIT (no error, nothing held).
    const pool = new pg.Pool({ connectionString: services.postgres.url, max: 1 });
    try {
      const db = drizzleNodePg({ client: pool });
      await db.transaction(async (tx) => {
        await tx.execute(drizzleSql`COMMIT`);
        const [[row]] = (await kind.run(tx, ['SELECT now() = statement_timestamp() AS outside'])) as [
          [{ outside: boolean }],
        ];
        expect(row.outside).toBe(true);
      });
    } finally {
      await pool.end();
    }
  });
});
