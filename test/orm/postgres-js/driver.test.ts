/**
 * The postgres.js driver on its own, against PostgreSQL: how oncely's statements reach a transaction's connection
 * (all in one message, counted on the wire, each statement's rows back), how it recognizes postgres.js's `sql`
 * objects, finds a failure's SQLSTATE, and opens transactions through `sql.begin`.
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import knex from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres, { type Sql, type TransactionSql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, idempotent } from '../../../src/index.js';
import type { RawRow } from '../../../src/orm/driver.js';
import { handleKindOf } from '../../../src/orm/handles.js';
import {
  PostgresJsStore,
  postgresJsDriver,
  postgresJsTransactions,
} from '../../../src/orm/postgres-js/index.js';
import { normalizeRow } from '../../../src/orm/rows.js';
import { runStatements } from '../../../src/orm/source.js';
import { scopedKey } from '../../../src/store.js';
import { requireService, services } from '../../support/services.js';
import { committedPayments, freshSchema, postgresJsOn } from './fixture.js';
import { startWireCounter, type WireCounter } from './wire-counter.js';

const kind = postgresJsTransactions;
const options = { isolation: 'read committed', timeoutMs: 1_000 } as const;

/** `sql.begin` with the work's value as it is (postgres.js's type unwraps arrays; a box keeps it). */
async function inTransaction<T>(sql: Sql, work: (tx: TransactionSql) => Promise<T>): Promise<T> {
  return (await sql.begin(async (tx) => ({ value: await work(tx) }))).value;
}

describe('postgres.js driver', () => {
  let schema: string;
  let sql: Sql;
  let wire: WireCounter;
  let counted: Sql;
  let committed: ReturnType<typeof committedPayments>;
  let payments: string;

  beforeAll(async () => {
    await requireService('postgres');
    schema = await freshSchema('postgres_js', 'driver');
    sql = postgresJsOn();
    wire = await startWireCounter();
    counted = postgres(wire.url, { max: 2, onnotice: () => {} });
    committed = committedPayments(schema);
    payments = `"${schema}".orm_payments`;
  });
  afterAll(async () => {
    await counted?.end();
    await wire?.close();
    await sql?.end();
    await committed?.end(true);
  });

  const count = (id: string) => committed.count(id);

  describe('run', () => {
    it("sends several statements in one message and returns each one's rows, in order, those without rows too", async () => {
      await inTransaction(counted, async (tx) => {
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
      await inTransaction(sql, async (tx) => {
        expect(
          await kind.run(tx, [
            'SELECT 1 AS a; SELECT 2 AS b',
            'SELECT 3 AS c;',
            'SELECT 4 AS d -- a comment to the end of the line',
            'SAVEPOINT t; SELECT 5 AS e; RELEASE SAVEPOINT t',
            '',
          ]),
        ).toEqual([[{ b: 2 }], [{ c: 3 }], [{ d: 4 }], [{ e: 5 }], []]);
      });
    });

    it('one statement goes as written, with no boundary; none sends nothing', async () => {
      await inTransaction(counted, async (tx) => {
        wire.reset();
        expect(await kind.run(tx, ["SELECT 'only' AS one"])).toEqual([[{ one: 'only' }]]);
        expect(await kind.run(tx, [])).toEqual([]);
        expect(wire.sent).toEqual([{ protocol: 'simple', text: "SELECT 'only' AS one" }]);
      });
    });

    it('leaves the text as written: question marks, dollar numbers and backslashes are not placeholders', async () => {
      const text = String.raw`SELECT '?' AS q, '$1' AS dollar, E'a\\b' AS backslash`;
      await inTransaction(sql, async (tx) => {
        expect(await kind.run(tx, [text, 'SELECT 1 AS n'])).toEqual([
          [{ q: '?', dollar: '$1', backslash: 'a\\b' }],
          [{ n: 1 }],
        ]);
      });
    });

    it('hands values over as postgres.js parses them (int8 as text, bytea as a Buffer); normalizeRow fixes them', async () => {
      const [[raw]] = (await inTransaction(sql, (tx) =>
        kind.run(tx, ["SELECT 9007199254740991::bigint AS token, '\\x0102'::bytea AS body, true AS held"]),
      )) as [[RawRow]];
      expect(raw).toEqual({ token: '9007199254740991', body: Buffer.from([1, 2]), held: true });
      expect(normalizeRow(raw)).toEqual({ token: 9007199254740991, body: Buffer.from([1, 2]), held: true });
    });

    it('a savepoint made and rolled back through run undoes the writes after it, and keeps those before', async () => {
      await inTransaction(sql, async (tx) => {
        await kind.run(tx, [`INSERT INTO ${payments} (id, cents) VALUES ('sp-kept', 1)`, 'SAVEPOINT s']);
        await kind.run(tx, [`INSERT INTO ${payments} (id, cents) VALUES ('sp-undone', 1)`]);
        await kind.run(tx, ['ROLLBACK TO SAVEPOINT s', 'RELEASE SAVEPOINT s']);
        const [seen] = await kind.run(tx, [`SELECT id FROM ${payments} WHERE id LIKE 'sp-%' ORDER BY id`]);
        expect(seen).toEqual([{ id: 'sp-kept' }]);
      });
      expect(await count('sp-kept')).toBe(1);
      expect(await count('sp-undone')).toBe(0);
    });

    it("refuses an answer that does not split into the statements' results (a transform renamed the boundary)", async () => {
      // postgres.camel renames every column, the boundary's too: the answer is one result, not two.
      const camel = postgres(services.postgres.url, { max: 1, transform: postgres.camel });
      try {
        await expect(
          inTransaction(camel, (tx) => kind.run(tx, ['SELECT 1 AS lease_until_ms', 'SELECT 2 AS b'])),
        ).rejects.toThrow(/2 statements sent in one message, 1 answered/);
      } finally {
        await camel.end();
      }
    });

    it('on the top-level sql, runs the statements on a pooled connection (in one implicit transaction)', async () => {
      expect(await kind.run(sql as unknown as TransactionSql, ['SELECT 1 AS a', 'SELECT 2 AS b'])).toEqual([
        [{ a: 1 }],
        [{ b: 2 }],
      ]);
    });
  });

  describe('inTransaction', () => {
    it("is true for begin's and savepoint's sql, false for the top-level sql and a reserved connection", async () => {
      expect(kind.inTransaction(sql as unknown as TransactionSql)).toBe(false);
      const reserved = await sql.reserve();
      try {
        expect(kind.inTransaction(reserved as unknown as TransactionSql)).toBe(false);
      } finally {
        reserved.release();
      }
      await sql.begin(async (tx) => {
        expect(kind.inTransaction(tx)).toBe(true);
        await tx.savepoint(async (sp) => {
          expect(kind.inTransaction(sp)).toBe(true);
        });
      });
    });
  });

  describe('a transaction whose callback has finished', () => {
    it('still has savepoint, and a statement on it runs outside any transaction, committing on its own', async () => {
      let ended: TransactionSql | undefined;
      await sql.begin(async (tx) => {
        ended = tx;
      });
      // postgres.js keeps no state on the transaction's sql: what docs/orm/postgres-js.md warns about.
      expect(kind.inTransaction(ended!)).toBe(true);
      await kind.run(ended!, [`INSERT INTO ${payments} (id, cents) VALUES ('late-1', 1)`]);
      expect(await count('late-1')).toBe(1);
    });
  });

  describe('is', () => {
    it("is the kind every ORM's objects are told apart by (outbox.add): no other ORM's shape claims these", async () => {
      expect(handleKindOf(sql)).toBe(kind);
      const reserved = await sql.reserve();
      try {
        expect(handleKindOf(reserved)).toBe(kind);
      } finally {
        reserved.release();
      }
      await sql.begin(async (tx) => {
        expect(handleKindOf(tx)).toBe(kind);
        await tx.savepoint(async (sp) => {
          expect(handleKindOf(sp)).toBe(kind);
        });
      });
    });

    it("recognizes postgres.js's sql: top-level, in a transaction, in a savepoint, reserved", async () => {
      expect(kind.is(sql)).toBe(true);
      const reserved = await sql.reserve();
      try {
        expect(kind.is(reserved)).toBe(true);
      } finally {
        reserved.release();
      }
      await sql.begin(async (tx) => {
        expect(kind.is(tx)).toBe(true);
        await tx.savepoint(async (sp) => {
          expect(kind.is(sp)).toBe(true);
        });
      });
    });

    it("rejects other ORMs' objects (Knex's instance is a function too), pg's clients and look-alikes", async () => {
      const pgPool = new pg.Pool({ connectionString: services.postgres.url });
      const pgClient = new pg.Client({ connectionString: services.postgres.url });
      const kysely = new Kysely({ dialect: new PostgresDialect({ pool: pgPool }) });
      const knexDb = knex({ client: 'pg', connection: services.postgres.url });
      try {
        const lookAlike = Object.assign(() => {}, { unsafe: () => {}, begin: () => {} });
        for (const other of [
          pgPool,
          pgClient,
          kysely,
          knexDb,
          drizzle(sql),
          lookAlike,
          { unsafe: () => {}, json: () => {}, array: () => {}, begin: () => {} },
          () => {},
          null,
          undefined,
          'sql',
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
    it('finds the SQLSTATE of a unique violation from run, and as the store reads it', async () => {
      await expect(
        sql.begin(async (tx) => {
          await tx`INSERT INTO ${tx(`${schema}.orm_payments`)} ${tx({ id: 'dup-1', cents: 1 })}`;
          const fromRun = await kind
            .run(tx, ['SAVEPOINT d', `INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`])
            .catch((error: unknown) => error);
          expect(kind.stateOf(fromRun)).toBe('23505');
          await kind.run(tx, ['ROLLBACK TO SAVEPOINT d']);
          const asTheStoreSees = await runStatements(kind, (list) => kind.run(tx, list), [
            `INSERT INTO ${payments} (id, cents) VALUES ('dup-1', 1)`,
          ]).catch((error: unknown) => error);
          expect(asTheStoreSees).toMatchObject({ code: '23505', severity: 'ERROR' });
        }),
        // postgres.js fails a transaction in which any statement failed, even one rolled back to a savepoint since.
      ).rejects.toMatchObject({ code: '23505' });
    });

    it("finds nothing in postgres.js's own failures (their code is no SQLSTATE) or an error without one", async () => {
      const ended = postgres(services.postgres.url, { max: 1 });
      await ended.end();
      const closed = await ended.unsafe('SELECT 1').catch((error: unknown) => error);
      expect(closed).toMatchObject({ code: 'CONNECTION_ENDED' });
      expect(kind.stateOf(closed)).toBeUndefined();
      expect(kind.stateOf(new Error('no state'))).toBeUndefined();
      expect(kind.stateOf({ code: '23505' })).toBeUndefined();
      expect(kind.stateOf('23505')).toBeUndefined();
    });
  });

  describe('transaction', () => {
    const driver = () => postgresJsDriver(sql);

    it("commits when the work resolves, and resolves with the work's value as it is (an array too)", async () => {
      const value = await driver().transaction(async (tx) => {
        await tx`INSERT INTO ${tx(`${schema}.orm_payments`)} ${tx({ id: 'tx-commit', cents: 1 })}`;
        return ['done', 1];
      }, options);
      expect(value).toEqual(['done', 1]);
      expect(await count('tx-commit')).toBe(1);
    });

    it("rolls back when the work rejects, and rejects with the work's error", async () => {
      const failure = new Error('card declined');
      await expect(
        driver().transaction(async (tx) => {
          await tx`INSERT INTO ${tx(`${schema}.orm_payments`)} ${tx({ id: 'tx-rollback', cents: 1 })}`;
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

    it("with no isolation level asks for none: the database's default, with a plain BEGIN", async () => {
      const seen = await postgresJsDriver(counted).transaction(
        async (tx) => {
          const [[row]] = (await kind.run(tx, [
            "SELECT current_setting('transaction_isolation') AS level",
          ])) as [[{ level: string }]];
          return row.level;
        },
        { ...options, isolation: undefined },
      );
      expect(seen).toBe('read committed');
      expect(wire.sent.map((query) => query.text).slice(-3)).toEqual([
        'begin ',
        "SELECT current_setting('transaction_isolation') AS level",
        'commit',
      ]);
    });

    it('rejects when the COMMIT fails, and nothing is kept', async () => {
      await committed.count('none'); // the schema exists
      await sql.unsafe(`CREATE TABLE IF NOT EXISTS "${schema}".deferred_check (id int PRIMARY KEY,
        other int REFERENCES "${schema}".deferred_check (id) DEFERRABLE INITIALLY DEFERRED)`);
      await expect(
        driver().transaction(async (tx) => {
          await tx`INSERT INTO ${tx(`${schema}.orm_payments`)} ${tx({ id: 'tx-commit-fails', cents: 1 })}`;
          await tx.unsafe(`INSERT INTO "${schema}".deferred_check VALUES (1, 99)`);
        }, options),
      ).rejects.toMatchObject({ code: '23503' });
      expect(await count('tx-commit-fails')).toBe(0);
    });
  });

  describe('driver.run (autocommit, on the pool)', () => {
    it('commits each statement on its own: a later one failing keeps the earlier', async () => {
      await expect(
        postgresJsDriver(sql).run([
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1) RETURNING id`,
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-1', 1)`,
        ]),
      ).rejects.toMatchObject({ code: '23505' });
      expect(await count('auto-1')).toBe(1);
    });

    it("returns each statement's rows", async () => {
      expect(
        await postgresJsDriver(sql).run([
          `INSERT INTO ${payments} (id, cents) VALUES ('auto-2', 1) RETURNING id`,
          "SELECT current_setting('transaction_isolation') AS level",
          'SELECT 1 AS none WHERE false',
        ]),
      ).toEqual([[{ id: 'auto-2' }], [{ level: 'read committed' }], []]);
    });
  });

  describe('PostgresJsStore', () => {
    it('refuses anything but the top-level sql: a transaction, a reserved connection, other objects', async () => {
      for (const bad of [null, undefined, 'postgres://', {}, () => {}, new pg.Pool()]) {
        expect(() => new PostgresJsStore({ sql: bad as unknown as Sql })).toThrow(InvalidOptionsError);
      }
      expect(() => new PostgresJsStore(null as unknown as { sql: Sql })).toThrow(InvalidOptionsError);
      const reserved = await sql.reserve();
      try {
        expect(() => new PostgresJsStore({ sql: reserved })).toThrow(/top-level sql/);
      } finally {
        reserved.release();
      }
      await sql.begin(async (tx) => {
        expect(() => new PostgresJsStore({ sql: tx as unknown as Sql })).toThrow(/top-level sql/);
      });
    });

    it('refuses a sql that transforms results (postgres.camel, …); one transforming only what goes out is fine', async () => {
      for (const transform of [
        postgres.camel,
        { column: (name: string) => name },
        { row: (row: object) => row },
      ]) {
        const transforming = postgres(services.postgres.url, { max: 1, transform });
        try {
          expect(() => new PostgresJsStore({ sql: transforming })).toThrow(/transform of results/);
        } finally {
          await transforming.end();
        }
      }
      const outgoing = postgres(services.postgres.url, { max: 1, transform: { undefined: null } });
      try {
        expect(() => new PostgresJsStore({ sql: outgoing })).not.toThrow();
      } finally {
        await outgoing.end();
      }
    });

    /** The queries one new request of `store` sent, after a first request warmed its connections. */
    async function sentByOneClaim(store: PostgresJsStore, scope: string): Promise<string[]> {
      const pay = idempotent(
        async (id: string, context) => {
          const tx = store.transactionOf(context);
          await tx`INSERT INTO ${tx(`${schema}.orm_payments`)} ${tx({ id, cents: 1 })}`;
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

    it.each([
      [undefined, 'begin '],
      ['serializable', 'begin isolation level serializable'],
    ] as const)(
      'a claim (isolation %s) costs four round trips of its own: BEGIN, the claim, the outcome, COMMIT',
      async (isolation, begin) => {
        const store = new PostgresJsStore({
          sql: counted,
          schema,
          ...(isolation === undefined ? {} : { isolation }),
        });
        const texts = await sentByOneClaim(store, `rt-${isolation ?? 'default'}`);
        // The handler's own insert is the fifth (postgres.js sends it on the extended protocol).
        expect(texts).toHaveLength(5);
        expect(texts.filter((text) => !text.includes('orm_payments'))).toHaveLength(4);
        expect(texts[0]).toBe(begin);
        expect(texts[4]).toBe('commit');
      },
    );

    it("joined, a claim that finds the key busy fails the caller's sql.begin at its end; in tx.savepoint it does not", async () => {
      // postgres.js's rule: a transaction in which a statement failed cannot commit, even after a ROLLBACK TO
      // SAVEPOINT sent as SQL; only its own tx.savepoint(fn) contains a failure. A busy key's claim fails (55P03).
      const store = new PostgresJsStore({ sql, schema });
      let entered!: () => void;
      let release!: () => void;
      const inside = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const holding = idempotent(
        async (id: string) => {
          entered();
          await held;
          return id;
        },
        { store, scope: 'busy', key: (id) => id },
      ).execute('busy-1');
      await inside;
      const payIn = (tx: TransactionSql) =>
        idempotent(async (id: string) => id, {
          store: store.join(tx),
          scope: 'busy',
          key: (id) => id,
        }).execute('busy-1');
      try {
        const rejected = await inTransaction(sql, async (tx) => {
          await expect(payIn(tx)).rejects.toMatchObject({ name: 'InProgressError' });
          await tx`INSERT INTO ${tx(`${schema}.orm_payments`)} ${tx({ id: 'busy-after', cents: 1 })}`;
        }).catch((error: unknown) => error);
        expect(rejected).toMatchObject({ code: '55P03' });
        expect(await count('busy-after')).toBe(0);

        await inTransaction(sql, async (tx) => {
          await expect(tx.savepoint((sp) => payIn(sp))).rejects.toMatchObject({ name: 'InProgressError' });
          await tx`INSERT INTO ${tx(`${schema}.orm_payments`)} ${tx({ id: 'busy-after-savepoint', cents: 1 })}`;
        });
        expect(await count('busy-after-savepoint')).toBe(1);
      } finally {
        release();
        await holding;
      }
    });

    it("a handler's failed statement, rolled back to a savepoint by SQL, still fails the commit: 503, nothing kept", async () => {
      const store = new PostgresJsStore({ sql, schema });
      let recovered = 0;
      const pay = idempotent(
        async (id: string, context) => {
          const tx = store.transactionOf(context);
          await tx`INSERT INTO ${tx(`${schema}.orm_payments`)} ${tx({ id, cents: 1 })}`;
          await tx.unsafe('SAVEPOINT mine');
          await tx`INSERT INTO ${tx(`${schema}.orm_payments`)} ${tx({ id, cents: 1 })}`.catch(async () => {
            await tx.unsafe('ROLLBACK TO SAVEPOINT mine');
            recovered += 1;
          });
          return id;
        },
        { store, scope: 'handler-savepoint', key: (id) => id },
      );
      await expect(pay.execute('hs-1')).rejects.toMatchObject({ name: 'StoreUnavailableError' });
      expect(recovered).toBe(1);
      expect(await count('hs-1')).toBe(0);
      expect(await store.get(scopedKey('fn:handler-savepoint', 'hs-1'))).toBeUndefined();
    });

    it('a joined claim costs three round trips: the savepoint with the claim, the outcome, the release', async () => {
      const store = new PostgresJsStore({ sql: counted, schema });
      await counted.begin(async (tx) => {
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
