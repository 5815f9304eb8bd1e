/**
 * @module The Prisma driver on its own, against real PostgreSQL through Prisma 7 and `@prisma/adapter-pg`: how
 * statements reach the connection (and in how many round trips, counted on the pg pool Prisma's adapter uses), how
 * transaction clients are recognized, where the SQLSTATE hides in Prisma's errors, and what `$transaction` is asked.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { idempotent } from '../../../src/index.js';
import { Outbox } from '../../../src/messaging/outbox/index.js';
import { returnsNoRows, sqlStateOf } from '../../../src/orm/prisma/handle.js';
import {
  PrismaStore,
  type PrismaTransaction,
  prismaDriver,
  prismaTransactions,
} from '../../../src/orm/prisma/index.js';
import { requireService, services } from '../../support/services.js';
import { freshSchema, type PrismaTx } from './fixture.js';
import { type Prisma, PrismaClient } from './generated/client.js';

/** A pg pool that records every query text its connections send (Prisma's adapter runs on it). */
function countingPool(): { pool: pg.Pool; sent: string[] } {
  const pool = new pg.Pool({ connectionString: services.postgres.url, max: 4 });
  const sent: string[] = [];
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    Object.assign(client, {
      query: (...args: unknown[]) => {
        const [first] = args;
        sent.push(typeof first === 'string' ? first : String((first as { text?: unknown }).text));
        return query(...args);
      },
    });
  });
  return { pool, sent };
}

let schema: string;
let pool: pg.Pool;
let sent: string[];
let prisma: PrismaClient;
let admin: pg.Pool;

beforeAll(async () => {
  await requireService('postgres');
  schema = await freshSchema('prisma_driver');
  ({ pool, sent } = countingPool());
  prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema }) });
  admin = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
});
afterAll(async () => {
  await prisma?.$disconnect();
  await pool?.end();
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin?.end();
});

const payments = () => `"${schema}".orm_payments`;
const ids = async () =>
  (await admin.query(`SELECT id FROM ${payments()} ORDER BY id`)).rows.map((row: { id: string }) => row.id);

describe('run', () => {
  it("returns each statement's rows, as Prisma reads them", async () => {
    const results = await prismaTransactions.run(prisma, [
      "SELECT 1::int4 AS one, 'a'::text AS letter",
      'SELECT n FROM generate_series(1, 3) AS n',
      "SELECT 7::int8 AS big, '\\x0102'::bytea AS body, true AS held",
    ]);
    expect(results).toEqual([
      [{ one: 1, letter: 'a' }],
      [{ n: 1 }, { n: 2 }, { n: 3 }],
      [{ big: 7n, body: new Uint8Array([1, 2]), held: true }],
    ]);
  });

  it('in a transaction, a run of rowless statements is one round trip; each statement with rows is one more', async () => {
    await prisma.$transaction(async (tx) => {
      sent.length = 0;
      const results = await prismaTransactions.run(tx, [
        'SAVEPOINT a',
        "SET LOCAL application_name = 'oncely'",
        'RELEASE SAVEPOINT a',
        "SELECT current_setting('application_name') AS name",
        'SAVEPOINT b',
        '-- a comment first\nROLLBACK TO SAVEPOINT b',
        'RELEASE SAVEPOINT b',
      ]);
      expect(results).toEqual([[], [], [], [{ name: 'oncely' }], [], [], []]);
      expect(sent).toHaveLength(3);
    });
  });

  it('outside a transaction, statements go one by one, each committing on its own', async () => {
    sent.length = 0;
    const table = `"${schema}".run_autocommit`;
    const error = await prismaTransactions
      .run(prisma, [`CREATE TABLE ${table} (id int)`, `CREATE TABLE ${table} (id int)`])
      .catch((caught: unknown) => caught);
    expect(sqlStateOf(error)).toBe('42P07');
    expect(sent).toHaveLength(2);
    // In one message, the second statement's failure would have undone the first.
    const { rows } = await admin.query('SELECT to_regclass($1) IS NOT NULL AS made', [table]);
    expect(rows[0].made).toBe(true);
  });

  it('a savepoint made with run and rolled back with run undoes the writes after it, and only those', async () => {
    await prisma.$transaction(async (tx) => {
      await tx.payment.create({ data: { id: 'sp-kept', cents: 1 } });
      await prismaTransactions.run(tx, ['SAVEPOINT oncely_claim']);
      await tx.payment.create({ data: { id: 'sp-undone', cents: 2 } });
      await prismaTransactions.run(tx, [
        'ROLLBACK TO SAVEPOINT oncely_claim',
        'RELEASE SAVEPOINT oncely_claim',
      ]);
    });
    expect((await ids()).filter((id: string) => id.startsWith('sp-'))).toEqual(['sp-kept']);
  });

  it('knows the statements that return no rows by their first word', () => {
    for (const statement of [
      'SAVEPOINT oncely_claim',
      ' release savepoint x',
      '/* note */ ROLLBACK',
      '-- why\nCREATE TABLE t (id int)',
      'DO $oncely$ BEGIN END $oncely$',
    ])
      expect(returnsNoRows(statement)).toBe(true);
    for (const statement of [
      'SELECT 1',
      'WITH x AS (SELECT 1) SELECT * FROM x',
      'INSERT INTO t VALUES (1) RETURNING id',
      'UPDATE t SET id = 2 RETURNING id',
      'DELETE FROM t RETURNING id',
      '-- CREATE\nSELECT 1',
      'VALUES (1)',
    ])
      expect(returnsNoRows(statement)).toBe(false);
  });
});

describe('the handle kind', () => {
  it('inTransaction: true inside $transaction (nested too), false on the client and once the callback returned', async () => {
    expect(prismaTransactions.inTransaction(prisma)).toBe(false);
    expect(prismaTransactions.inTransaction(prisma.$extends({}))).toBe(false);
    const outside = await prisma.$transaction(async (tx) => {
      expect(prismaTransactions.inTransaction(tx)).toBe(true);
      await tx.$transaction(async (inner) => {
        expect(prismaTransactions.inTransaction(inner)).toBe(true);
        expect(prismaTransactions.inTransaction(tx)).toBe(true);
      });
      expect(prismaTransactions.inTransaction(tx)).toBe(true);
      return tx;
    });
    expect(prismaTransactions.inTransaction(outside)).toBe(false);
    const rolledBack = await prisma
      .$transaction(async (tx) => {
        throw tx;
      })
      .catch((tx: PrismaTx) => tx);
    expect(prismaTransactions.inTransaction(rolledBack)).toBe(false);
    await prisma.$extends({}).$transaction(async (tx) => {
      expect(prismaTransactions.inTransaction(tx)).toBe(true);
    });
  });

  it('is: a PrismaClient and its transaction clients, never pg, Kysely or plain objects', async () => {
    expect(prismaTransactions.is(prisma)).toBe(true);
    await prisma.$transaction(async (tx) => {
      expect(prismaTransactions.is(tx)).toBe(true);
    });
    const kysely = new Kysely<object>({ dialect: new PostgresDialect({ pool: admin }) });
    const client = new pg.Client({ connectionString: services.postgres.url });
    for (const other of [
      admin,
      client,
      kysely,
      {},
      { query: () => undefined },
      { $queryRawUnsafe: () => [] },
      null,
      undefined,
      'prisma',
      () => 1,
    ])
      expect(prismaTransactions.is(other)).toBe(false);
  });

  it("stateOf: the SQLSTATE under Prisma's wrapping (raw query P2010, model API P2002), never Prisma's own code", async () => {
    await prisma.payment.create({ data: { id: 'dup', cents: 1 } });
    const raw = await prismaTransactions
      .run(prisma, [`INSERT INTO ${payments()} VALUES ('dup', 2)`])
      .catch((caught: unknown) => caught);
    expect((raw as { code?: unknown }).code).toBe('P2010');
    expect(prismaTransactions.stateOf?.(raw)).toBe('23505');
    const model = await prisma.payment
      .create({ data: { id: 'dup', cents: 2 } })
      .catch((caught: unknown) => caught);
    expect((model as { code?: unknown }).code).toBe('P2002');
    expect(prismaTransactions.stateOf?.(model)).toBe('23505');
    const adapterError = (raw as { meta: { driverAdapterError: unknown } }).meta.driverAdapterError;
    expect(prismaTransactions.stateOf?.(adapterError)).toBe('23505');
    // A failure Prisma raises itself carries its own P-code only: no SQLSTATE.
    const expired = await prisma
      .$transaction(async (tx) => tx)
      .then((tx) => tx.$queryRawUnsafe('SELECT 1'))
      .catch((caught: unknown) => caught);
    expect((expired as { code?: unknown }).code).toBe('P2028');
    expect(prismaTransactions.stateOf?.(expired)).toBeUndefined();
    expect(prismaTransactions.stateOf?.({ code: 'P2010' })).toBeUndefined();
    expect(prismaTransactions.stateOf?.(null)).toBeUndefined();
  });
});

describe('transaction', () => {
  const driver = () => prismaDriver(prisma);

  it('commits when the work resolves, with its value', async () => {
    const value = await driver().transaction(
      async (tx) => {
        await tx.payment.create({ data: { id: 'tx-commit', cents: 1 } });
        return 'done';
      },
      { isolation: 'read committed', timeoutMs: 5_000 },
    );
    expect(value).toBe('done');
    expect(await ids()).toContain('tx-commit');
  });

  it("rolls back when the work rejects, with the work's error", async () => {
    const failure = new Error('declined');
    await expect(
      driver().transaction(
        async (tx) => {
          await tx.payment.create({ data: { id: 'tx-rollback', cents: 1 } });
          throw failure;
        },
        { isolation: 'read committed', timeoutMs: 5_000 },
      ),
    ).rejects.toBe(failure);
    expect(await ids()).not.toContain('tx-rollback');
  });

  it('opens the transaction at the isolation level asked', async () => {
    for (const isolation of ['read committed', 'repeatable read', 'serializable'] as const) {
      const [[row]] = (await driver().transaction(
        (tx) => prismaTransactions.run(tx, ["SELECT current_setting('transaction_isolation') AS level"]),
        { isolation, timeoutMs: 5_000 },
      )) as [[{ level: string }]];
      expect(row.level).toBe(isolation);
    }
  });

  it("gives Prisma's transaction clock timeoutMs, not the client's default", async () => {
    // The client's own default is 150 ms: a transaction still usable after 400 ms ran on oncely's timeoutMs.
    const hurried = new PrismaClient({
      adapter: new PrismaPg({ connectionString: services.postgres.url, max: 2 }, { schema }),
      transactionOptions: { timeout: 150, maxWait: 150 },
    });
    try {
      const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      const rows = await prismaDriver(hurried).transaction(
        async (tx) => {
          await sleep(400);
          return tx.$queryRawUnsafe('SELECT 1 AS one');
        },
        { isolation: 'read committed', timeoutMs: 2_000 },
      );
      expect(rows).toEqual([{ one: 1 }]);
      // And Prisma does end it at timeoutMs: the clock is oncely's, not turned off.
      const late = await prismaDriver(hurried)
        .transaction(
          async (tx) => {
            await sleep(700);
            return tx.$queryRawUnsafe('SELECT 1');
          },
          { isolation: 'read committed', timeoutMs: 300 },
        )
        .catch((caught: unknown) => caught);
      expect((late as { code?: unknown }).code).toBe('P2028');
    } finally {
      await hurried.$disconnect();
    }
  });

  it("waits for a pool connection as long as timeoutMs, not the client's maxWait", async () => {
    const narrow = new PrismaClient({
      adapter: new PrismaPg({ connectionString: services.postgres.url, max: 1 }, { schema }),
      transactionOptions: { maxWait: 100 },
    });
    try {
      const options = { isolation: 'read committed', timeoutMs: 3_000 } as const;
      let release!: () => void;
      const holding = new Promise<void>((resolve) => {
        release = resolve;
      });
      const first = prismaDriver(narrow).transaction(() => holding, options);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = prismaDriver(narrow).transaction(async () => 'second', options);
      setTimeout(release, 400);
      await first;
      expect(await second).toBe('second');
    } finally {
      await narrow.$disconnect();
    }
  });
});

describe('PrismaStore', () => {
  it('takes the PrismaClient and refuses anything else, a transaction client too', async () => {
    expect(() => new PrismaStore({ prisma, schema })).not.toThrow();
    const notAClient = /pass \{ prisma \}, your PrismaClient/;
    expect(() => new PrismaStore({} as { prisma: PrismaClient })).toThrow(InvalidOptionsError);
    expect(() => new PrismaStore({ prisma: admin } as unknown as { prisma: PrismaClient })).toThrow(
      notAClient,
    );
    expect(() => new PrismaStore(null as unknown as { prisma: PrismaClient })).toThrow(notAClient);
    // Raw queries alone are not a client: the store opens its transactions with $transaction.
    const rawOnly = { $queryRawUnsafe: async () => [], $executeRawUnsafe: async () => 0, $disconnect() {} };
    expect(() => new PrismaStore({ prisma: rawOnly } as unknown as { prisma: PrismaClient })).toThrow(
      notAClient,
    );
    await prisma.$transaction(async (tx) => {
      expect(() => new PrismaStore({ prisma: tx as unknown as PrismaClient })).toThrow(/transaction client/);
    });
  });

  it('migrates through Prisma (twice: it is idempotent)', async () => {
    const own = `${schema}_migrated`;
    const store = new PrismaStore({ prisma, schema: own });
    try {
      await store.migrate();
      await store.migrate();
      const { rows } = await admin.query('SELECT to_regclass($1) IS NOT NULL AS made', [
        `"${own}".oncely_keys`,
      ]);
      expect(rows[0].made).toBe(true);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${own}" CASCADE`);
    }
  });

  it("on a client made by $extends: its transaction client, and its query extensions see oncely's statements", async () => {
    const operations: string[] = [];
    const extended = prisma.$extends({
      query: {
        async $allOperations({ operation, args, query }) {
          operations.push(operation);
          return query(args);
        },
      },
    });
    const store = new PrismaStore({ prisma: extended, schema });
    const pay = idempotent(
      async (payment: { id: string }, context) => {
        await store.transactionOf(context).payment.create({ data: { id: payment.id, cents: 1 } });
        return 'paid';
      },
      { store, scope: 'extended', key: (payment) => payment.id },
    );
    expect(await pay.execute({ id: 'ext-1' })).toEqual({ value: 'paid', replayed: false });
    expect(await pay.execute({ id: 'ext-1' })).toEqual({ value: 'paid', replayed: true });
    // The claim, the payment, the stored result; then the retry's claim, which replays.
    expect(operations).toEqual(['$queryRawUnsafe', 'create', '$queryRawUnsafe', '$queryRawUnsafe']);
  });

  it("types the handle as the client's own transaction client", async () => {
    const store = new PrismaStore({ prisma, schema });
    expectTypeOf<PrismaTransaction<PrismaClient>>().toEqualTypeOf<Prisma.TransactionClient>();
    expectTypeOf(store.transactionOf).returns.toEqualTypeOf<Prisma.TransactionClient>();
    const extended = prisma.$extends({ client: { $ping: () => 'pong' as const } });
    const extendedStore = new PrismaStore({ prisma: extended, schema });
    type ExtendedTx = ReturnType<typeof extendedStore.transactionOf>;
    expectTypeOf<ExtendedTx['$ping']>().toEqualTypeOf<() => 'pong'>();
    expectTypeOf<ExtendedTx>().not.toHaveProperty('$disconnect');
    expectTypeOf<ExtendedTx['payment']['create']>().toBeFunction();
  });

  it('counts: the round trips of one claim, own transaction and joined', async () => {
    const store = new PrismaStore({ prisma, schema });
    const pay = (target: PrismaStore<PrismaClient>, scope: string) =>
      idempotent(
        async (payment: { id: string }, context) => {
          sent.push('-- handler');
          await target.transactionOf(context).payment.create({ data: { id: payment.id, cents: 1 } });
          sent.push('-- handler done');
          return 'paid';
        },
        { store: target, scope, key: (payment) => payment.id },
      );
    sent.length = 0;
    await pay(store, 'trips').execute({ id: 'trip-1' });
    const own = [...sent];
    await prisma.$transaction(async (tx) => {
      sent.length = 0;
      await pay(store.join(tx) as PrismaStore<PrismaClient>, 'trips-joined').execute({ id: 'trip-2' });
      sent.push('-- paid');
    });
    const joined = sent.slice(0, sent.indexOf('-- paid') + 1);
    const tripsOf = (list: string[]) => ({
      claim: list.indexOf('-- handler'),
      settle: list.length - list.indexOf('-- handler done') - 2,
    });
    // Own transaction, the database's isolation level (the default): BEGIN, the claim; then the outcome and COMMIT.
    // An explicit level costs one more: Prisma sends SET TRANSACTION as a message of its own.
    expect(tripsOf([...own, '-- end'])).toEqual({ claim: 2, settle: 2 });
    // Joined: SAVEPOINT, the claim; then the outcome and RELEASE SAVEPOINT (the COMMIT is the caller's, later).
    expect(tripsOf(joined)).toEqual({ claim: 2, settle: 2 });
  });
});

describe('the outbox through Prisma', () => {
  it('adds an event through the transaction client, NOTIFY included (its void result read as text)', async () => {
    const outbox = new Outbox({ schema, notify: true });
    const id = await prisma.$transaction((tx) =>
      outbox.add(tx, { topic: 'payment.created', key: 'ob-1', payload: 1 }),
    );
    const { rows } = await admin.query(`SELECT key FROM "${schema}".oncely_outbox WHERE id = $1`, [id]);
    expect(rows).toEqual([{ key: 'ob-1' }]);
  });

  it('refuses the PrismaClient itself: outside a transaction the event would commit on its own', async () => {
    const outbox = new Outbox({ schema });
    await expect(outbox.add(prisma, { topic: 't', payload: 1 })).rejects.toThrow(InvalidOptionsError);
  });
});
