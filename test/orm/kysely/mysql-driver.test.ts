/**
 * KyselyStore on MySQL beyond the shared suite: the dialect told from the instance, the options PostgreSQL alone
 * has refused, the store's columns read without the instance's plugins, and the statements a request costs
 * (the server's own count, on a pool of one connection).
 */
import { CamelCasePlugin, Kysely, MysqlDialect, PostgresDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, idempotent } from '../../../src/index.js';
import { KyselyStore } from '../../../src/orm/kysely/index.js';
import { inlineValues } from '../../../src/stores/mysql/sql.js';
import { requireService, services } from '../../support/services.js';
import { connectionOptions } from '../support/mysql-fixture.js';
import { freshMySqlTables, type MySqlTablesOwner } from '../support/mysql-tables.js';
import type { MySqlDatabase } from './mysql-fixture.js';

describe('KyselyStore on MySQL', () => {
  let tables: MySqlTablesOwner;
  let db: Kysely<MySqlDatabase>;
  let store: KyselyStore<MySqlDatabase>;

  beforeAll(async () => {
    await requireService('mariadb');
    tables = await freshMySqlTables('kysely_driver');
    db = mysqlKysely(1);
    store = new KyselyStore({ db, table: tables.table });
    await store.migrate();
  });
  afterAll(async () => {
    await db?.destroy();
    await tables?.drop();
  });

  function mysqlKysely(poolSize: number, plugins = false): Kysely<MySqlDatabase> {
    const pool = createPool({
      ...connectionOptions(services.mariadb.url),
      database: tables.database,
      connectionLimit: poolSize,
    });
    const made = new Kysely<MySqlDatabase>({ dialect: new MysqlDialect({ pool }) });
    return plugins ? made.withPlugin(new CamelCasePlugin()) : made;
  }

  it('tells the dialect from the instance: MysqlDialect is MySQL, PostgresDialect PostgreSQL', async () => {
    expect(store.dialect).toBe('mysql');
    const pgDb = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });
    try {
      expect(new KyselyStore({ db: pgDb }).dialect).toBe('postgres');
    } finally {
      await pgDb.destroy();
    }
  });

  it('refuses the options only PostgreSQL has, with a typed error', () => {
    expect(() => new KyselyStore({ db, schema: 'x' })).toThrow(InvalidOptionsError);
    expect(() => new KyselyStore({ db, pollIntervalMs: 10 })).toThrow(InvalidOptionsError);
    expect(() => new KyselyStore({ db, table: '' })).toThrow(InvalidOptionsError);
    expect(() => new KyselyStore({ db, isolation: 'snapshot' as never })).toThrow(InvalidOptionsError);
  });

  it("runs without the instance's plugins: a CamelCasePlugin does not rename the store's columns", async () => {
    const camel = mysqlKysely(2, true);
    try {
      const camelStore = new KyselyStore({ db: camel, table: tables.table });
      const pay = idempotent(async () => 'paid', { store: camelStore, scope: 'camel', key: () => 'k-camel' });
      expect(await pay.execute(undefined)).toEqual({ value: 'paid', replayed: false });
      expect(await pay.execute(undefined)).toEqual({ value: 'paid', replayed: true });
    } finally {
      await camel.destroy();
    }
  });

  it('values go into the text as hex literals: no quote, backslash or ? of theirs reaches the ORM', async () => {
    const text = inlineValues('SELECT ? AS a, ? AS b, ? AS c, ? AS d, ? AS e', [
      "it's a \\ ? `x`",
      new Uint8Array([0, 39, 92, 63]),
      null,
      -12,
      '',
    ]);
    expect(text.replace(/X'[0-9a-f]*'/g, '')).not.toMatch(/['\\?`]/);
    const { rows } = await sql.raw<Record<string, unknown>>(text).execute(db);
    expect(rows[0]).toMatchObject({ a: "it's a \\ ? `x`", c: null, d: -12, e: '' });
    expect(Buffer.from(rows[0]?.b as Uint8Array)).toEqual(Buffer.from([0, 39, 92, 63]));
    expect(inlineValues("SELECT '?', `?`, ?", [1])).toBe("SELECT '?', `?`, 1");
    expect(() => inlineValues('SELECT ?', [])).toThrow(RangeError);
    expect(() => inlineValues('SELECT 1', [1])).toThrow(RangeError);
  });

  it('costs four statements beyond the handler’s own for a new key, three for a replay (own transaction)', async () => {
    const questions = async () =>
      Number(
        (await sql.raw<{ Value: string }>("SHOW SESSION STATUS LIKE 'Questions'").execute(db)).rows[0]?.Value,
      );
    const counted = async (run: () => Promise<unknown>) => {
      const before = await questions();
      await run();
      return (await questions()) - before - 1;
    };
    const pay = idempotent(
      async (id: string, context) => {
        await store
          .transactionOf(context)
          .insertInto(tables.payments as 'payments')
          .values({ id, cents: 1 })
          .execute();
        return 'paid';
      },
      { store, scope: 'count', key: (id) => id },
    );
    // BEGIN, the claim (one CALL), the handler's INSERT, the outcome, COMMIT.
    expect(await counted(() => pay('q-1'))).toBe(5);
    // BEGIN, the claim (a replay, with the outcome), ROLLBACK.
    expect(await counted(() => pay('q-1'))).toBe(3);
    // Joined: SAVEPOINT, the claim, the handler's INSERT, RELEASE SAVEPOINT, the outcome (BEGIN and COMMIT the caller's).
    expect(
      await counted(() =>
        db.transaction().execute((trx) =>
          idempotent(
            async (id: string, context) => {
              await store
                .transactionOf(context)
                .insertInto(tables.payments as 'payments')
                .values({ id, cents: 1 })
                .execute();
              return 'paid';
            },
            { store: store.join(trx), scope: 'count-joined', key: (id) => id },
          )('q-2'),
        ),
      ),
    ).toBe(7);
  });
});
