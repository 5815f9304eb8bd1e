/**
 * @module The paths the ORM benchmark measures, in pairs on one database object each: a new request writing one
 * payment row in the library's own transaction (the baseline), and the same write through oncely's store on that
 * object (`store.transactionOf(context)` in an `idempotent()` handler). The pairs: raw pg with pg mode's
 * `PostgresStore#transactional()`, then each ORM with its oncely store. Each ORM is imported only when its pair is
 * opened, and every connection carries APPLICATION_NAME and is kept (no idle timeout), so the server processes
 * found before a round are the ones that serve it.
 */
import type pg from 'pg';
import type { Store } from '../../src/core/store.js';
import { idempotent } from '../../src/index.js';
import type { Scenario } from '../postgres/scenarios.js';
import { APPLICATION_NAME, DATABASE_URL, PAYMENTS_TABLE, versionOf } from './fixtures.js';
import { postgresJsDebug } from './round-trips.js';

export interface PathPair {
  /** The library, as the tables name it: `Kysely`, `Prisma`, … */
  readonly name: string;
  /** `kysely 0.28.19`: the package measured, for the environment line. */
  readonly version: string;
  /** A new request in the library's own transaction, without oncely. */
  readonly baseline: Scenario;
  /** The same request through oncely's store on the same database object. */
  readonly oncely: Scenario;
  /** How round trips were counted for this pair. */
  readonly counted: 'pg' | 'postgres.js';
  close(): Promise<void>;
}

export interface PathSettings {
  readonly schema: string;
  /** Connections of each pair's pool. */
  readonly poolSize: number;
}

interface Payment {
  readonly id: string;
  readonly cents: number;
}

const CENTS = 100;
// Long enough never to end during a run: a pool that closed idle connections between rounds would open new server
// processes the round's CPU reading does not know yet.
const KEEP_IDLE_MS = 3_600_000;

/** The pairs by the name `--orms=` takes, in the order the tables list them. */
export const PAIRS: Record<string, (settings: PathSettings) => Promise<PathPair>> = {
  pg: pgPair,
  kysely: kyselyPair,
  drizzle: drizzlePair,
  knex: knexPair,
  typeorm: typeormPair,
  'mikro-orm': mikroOrmPair,
  'postgres-js': postgresJsPair,
  prisma: prismaPair,
};

/** The pool config of every pg-based pair: named connections, kept while idle. */
function pgPoolConfig(poolSize: number): pg.PoolConfig {
  return {
    connectionString: DATABASE_URL,
    application_name: APPLICATION_NAME,
    max: poolSize,
    idleTimeoutMillis: 0,
  };
}

async function pgPool(poolSize: number): Promise<pg.Pool> {
  const { default: pgModule } = await import('pg');
  const pool = new pgModule.Pool(pgPoolConfig(poolSize));
  pool.on('error', () => {});
  return pool;
}

/**
 * The oncely half of a pair: `idempotent()` on `store` whose handler writes with `write` (the library's own API on
 * the transaction in the context). Every request is a new key; a replay would be a bug of the run, so it throws.
 */
function throughOncely(
  name: string,
  store: Store,
  write: (context: { readonly transaction?: unknown }, payment: Payment) => Promise<unknown>,
): Scenario {
  const pay = idempotent(
    async (payment: Payment, context) => {
      await write(context, payment);
      return { paid: payment.cents };
    },
    { store, scope: `pay-${name}`, key: (payment) => payment.id },
  );
  return {
    name: `${name}: through oncely`,
    request: async (id) => {
      if ((await pay.execute({ id, cents: CENTS })).replayed) throw new Error(`${name}: ${id} replayed`);
    },
  };
}

function ownTransaction(name: string, request: (payment: Payment) => Promise<unknown>): Scenario {
  return { name: `${name}: its own transaction`, request: (id) => request({ id, cents: CENTS }) };
}

async function pgPair({ schema, poolSize }: PathSettings): Promise<PathPair> {
  const { PostgresStore, transactionOf } = await import('../../src/stores/postgres/index.js');
  const pool = await pgPool(poolSize);
  const insert = `INSERT INTO "${schema}".${PAYMENTS_TABLE} (id, cents) VALUES ($1, $2)`;
  const store = new PostgresStore({ pool, schema, listen: false }).transactional();
  return {
    name: 'pg (raw pg → pg mode)',
    version: `pg ${versionOf('pg')}`,
    counted: 'pg',
    baseline: {
      name: 'raw pg: BEGIN, INSERT, COMMIT',
      request: async (id) => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query(insert, [id, CENTS]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        } finally {
          client.release();
        }
      },
    },
    oncely: {
      ...throughOncely('pg', store, (context, p) => transactionOf(context).query(insert, [p.id, p.cents])),
      name: 'pg mode: `PostgresStore#transactional()`',
    },
    close: () => pool.end(),
  };
}

interface KyselyDatabase {
  orm_payments: { id: string; cents: number };
}

async function kyselyPair({ schema, poolSize }: PathSettings): Promise<PathPair> {
  const { Kysely, PostgresDialect } = await import('kysely');
  const { KyselyStore } = await import('../../src/orm/kysely/index.js');
  const db = new Kysely<KyselyDatabase>({
    dialect: new PostgresDialect({ pool: await pgPool(poolSize) }),
  }).withSchema(schema);
  const store = new KyselyStore({ db, schema });
  return {
    name: 'Kysely',
    version: `kysely ${versionOf('kysely')}`,
    counted: 'pg',
    baseline: ownTransaction('Kysely', (p) =>
      db.transaction().execute((trx) => trx.insertInto('orm_payments').values(p).execute()),
    ),
    oncely: throughOncely('Kysely', store, (context, p) =>
      store.transactionOf(context).insertInto('orm_payments').values(p).execute(),
    ),
    close: () => db.destroy(),
  };
}

async function drizzlePair({ schema, poolSize }: PathSettings): Promise<PathPair> {
  const { drizzle } = await import('drizzle-orm/node-postgres');
  const { integer, pgSchema, text } = await import('drizzle-orm/pg-core');
  const { DrizzleStore } = await import('../../src/orm/drizzle/index.js');
  const payments = pgSchema(schema).table(PAYMENTS_TABLE, {
    id: text('id').primaryKey(),
    cents: integer('cents').notNull(),
  });
  const pool = await pgPool(poolSize);
  const db = drizzle({ client: pool });
  const store = new DrizzleStore({ db, schema });
  return {
    name: 'Drizzle',
    version: `drizzle-orm ${versionOf('drizzle-orm')} (node-postgres)`,
    counted: 'pg',
    baseline: ownTransaction('Drizzle', (p) =>
      db.transaction(async (tx) => {
        await tx.insert(payments).values(p);
      }),
    ),
    oncely: throughOncely('Drizzle', store, (context, p) =>
      store.transactionOf(context).insert(payments).values(p),
    ),
    close: () => pool.end(),
  };
}

async function knexPair({ schema, poolSize }: PathSettings): Promise<PathPair> {
  const { default: knexOf } = await import('knex');
  const { KnexStore } = await import('../../src/orm/knex/index.js');
  const knex = knexOf({
    client: 'pg',
    connection: { connectionString: DATABASE_URL, application_name: APPLICATION_NAME },
    pool: { min: 0, max: poolSize, idleTimeoutMillis: KEEP_IDLE_MS },
  });
  const store = new KnexStore({ knex, schema });
  return {
    name: 'Knex',
    version: `knex ${versionOf('knex')}`,
    counted: 'pg',
    baseline: ownTransaction('Knex', (p) =>
      knex.transaction(async (trx) => {
        await trx.withSchema(schema).insert(p).into(PAYMENTS_TABLE);
      }),
    ),
    oncely: throughOncely('Knex', store, (context, p) =>
      store.transactionOf(context).withSchema(schema).insert(p).into(PAYMENTS_TABLE).then(),
    ),
    close: () => knex.destroy(),
  };
}

async function typeormPair({ schema, poolSize }: PathSettings): Promise<PathPair> {
  const { DataSource, EntitySchema } = await import('typeorm');
  const { TypeOrmStore } = await import('../../src/orm/typeorm/index.js');
  const Payment = new EntitySchema<Payment>({
    name: 'Payment',
    tableName: PAYMENTS_TABLE,
    columns: { id: { type: 'text', primary: true }, cents: { type: 'integer' } },
  });
  const dataSource = await new DataSource({
    type: 'postgres',
    url: DATABASE_URL,
    schema,
    entities: [Payment],
    poolSize,
    applicationName: APPLICATION_NAME,
    extra: { idleTimeoutMillis: 0 },
  }).initialize();
  const store = new TypeOrmStore({ dataSource, schema });
  return {
    name: 'TypeORM',
    version: `typeorm ${versionOf('typeorm')}`,
    counted: 'pg',
    baseline: ownTransaction('TypeORM', (p) =>
      dataSource.transaction((manager) => manager.insert(Payment, p)),
    ),
    oncely: throughOncely('TypeORM', store, (context, p) => store.transactionOf(context).insert(Payment, p)),
    close: () => dataSource.destroy(),
  };
}

async function mikroOrmPair({ schema, poolSize }: PathSettings): Promise<PathPair> {
  const { EntitySchema, MikroORM } = await import('@mikro-orm/postgresql');
  const { MikroOrmStore } = await import('../../src/orm/mikro-orm/index.js');
  const Payment = new EntitySchema<Payment>({
    name: 'Payment',
    tableName: PAYMENTS_TABLE,
    properties: { id: { type: 'string', primary: true }, cents: { type: 'integer' } },
  });
  const orm = await MikroORM.init({
    clientUrl: DATABASE_URL,
    schema,
    entities: [Payment],
    pool: { min: 0, max: poolSize, idleTimeoutMillis: KEEP_IDLE_MS },
    driverOptions: { connection: { application_name: APPLICATION_NAME } },
    allowGlobalContext: false,
  });
  const store = new MikroOrmStore({ orm, schema });
  return {
    name: 'MikroORM',
    version: `@mikro-orm/postgresql ${versionOf('@mikro-orm/postgresql')}`,
    counted: 'pg',
    // Persisted, not flushed: `em.transactional` flushes the unit of work before its COMMIT, on both paths.
    baseline: ownTransaction('MikroORM', (p) =>
      orm.em.transactional(async (em) => {
        em.persist(em.create(Payment, p));
      }),
    ),
    oncely: throughOncely('MikroORM', store, async (context, p) => {
      const em = store.transactionOf(context);
      em.persist(em.create(Payment, p));
    }),
    close: () => orm.close(),
  };
}

async function postgresJsPair({ schema, poolSize }: PathSettings): Promise<PathPair> {
  const { default: postgres } = await import('postgres');
  const { PostgresJsStore } = await import('../../src/orm/postgres-js/index.js');
  // No idle timeout by default: the connections stay.
  const sql = postgres(DATABASE_URL, {
    max: poolSize,
    connection: { application_name: APPLICATION_NAME },
    debug: postgresJsDebug,
    onnotice: () => {},
  });
  const store = new PostgresJsStore({ sql, schema });
  const payments = `${schema}.${PAYMENTS_TABLE}`;
  return {
    name: 'postgres.js',
    version: `postgres ${versionOf('postgres')}`,
    counted: 'postgres.js',
    baseline: ownTransaction('postgres.js', (p) =>
      sql.begin((tx) => tx`INSERT INTO ${tx(payments)} ${tx({ ...p })}`),
    ),
    oncely: throughOncely('postgres.js', store, (context, p) => {
      const tx = store.transactionOf(context);
      return tx`INSERT INTO ${tx(payments)} ${tx({ ...p })}`;
    }),
    close: () => sql.end(),
  };
}

async function prismaPair({ schema, poolSize }: PathSettings): Promise<PathPair> {
  // The tests' Prisma client (one model on orm_payments), generated as the tests' global setup does: a no-op when
  // it was made from this schema by this Prisma already.
  const { default: generatePrismaClient } = await import('../../test/orm/prisma/generate-client.js');
  generatePrismaClient();
  const { PrismaPg } = await import('@prisma/adapter-pg');
  const { PrismaClient } = await import('../../test/orm/prisma/generated/client.js');
  const { PrismaStore } = await import('../../src/orm/prisma/index.js');
  const prisma = new PrismaClient({ adapter: new PrismaPg(pgPoolConfig(poolSize), { schema }) });
  const store = new PrismaStore({ prisma, schema });
  return {
    name: 'Prisma',
    version: `@prisma/client ${versionOf('@prisma/client')} + @prisma/adapter-pg ${versionOf('@prisma/adapter-pg')}`,
    counted: 'pg',
    baseline: ownTransaction('Prisma', (p) =>
      // Prisma's own clocks widened (oncely's driver widens them to its lease), so a busy machine does not fail
      // the baseline on the default 2 s wait for a pool connection; they change no message.
      prisma.$transaction((tx) => tx.payment.create({ data: p }), { maxWait: 60_000, timeout: 60_000 }),
    ),
    oncely: throughOncely('Prisma', store, (context, p) =>
      store.transactionOf(context).payment.create({ data: p }),
    ),
    close: () => prisma.$disconnect(),
  };
}
