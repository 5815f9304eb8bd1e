/**
 * @module The proof's transactional mode through an ORM (store kinds `postgres-kysely`, `postgres-drizzle`,
 * `postgres-prisma`): the app server's store is the ORM's store (KyselyStore, DrizzleStore, PrismaStore) on the
 * ORM's own pool, reached through the fault proxy, and the handler writes the payment row through the ORM's own
 * transaction object (`store.transactionOf(context)`) with that ORM's raw-SQL API, the same columns pg mode writes
 * (proof/server.ts). Each ORM is imported only when its kind runs, so the other phases never load it.
 */
import type pg from 'pg';
import type { Store } from '../src/core/store.js';
import type { OrmStoreKind } from './types.js';

/** A payment row's values, as the app server has them; backend and transaction start come from the database. */
export interface PaymentValues {
  readonly key: string;
  readonly id: string;
  readonly token: number;
  readonly pid: number;
  readonly server: string;
  readonly at: number;
}

export interface OrmStoreSettings {
  /** The database URL through the fault proxy. */
  readonly url: string;
  readonly schema: string;
  /** Every app connection carries it: the backend-terminate fault aims at it. */
  readonly applicationName: string;
  readonly connectTimeoutMs: number;
  readonly poolSize: number;
  /** The payments table, quoted and schema-qualified. */
  readonly payments: string;
}

export interface OrmStoreUnderTest {
  readonly store: Store;
  /** Inserts the payment through the ORM's transaction of the claim in `context`. */
  pay(context: { readonly transaction?: unknown }, payment: PaymentValues): Promise<void>;
  close(): Promise<void>;
}

/** Run by the harness before it starts the app servers: the Prisma client the servers import must exist. */
export async function prepareOrm(kind: OrmStoreKind): Promise<void> {
  if (kind !== 'postgres-prisma') return;
  // The same generation as the tests' global setup (a no-op when the client was made from this schema already).
  const { default: generatePrismaClient } = await import('../test/orm/prisma/generate-client.js');
  generatePrismaClient();
}

/**
 * The pool every ORM runs on, set up as pg mode's (the profile's size, the store timeout to connect, the app's
 * application_name), and able to survive its connections' backends being terminated. The pool's 'error' covers
 * idle clients only: pg-pool drops its listener when it hands a client out, and Kysely and Drizzle (node-postgres)
 * attach none to the clients they check out. A checked-out client whose backend dies between two queries, as a
 * claim's transaction does while the handler works, then emits an 'error' nobody listens to, and the process
 * crashes (found by this proof: all four app servers died on the first `pg_terminate_backend`). So every client
 * gets a listener of its own for its whole life, from the pool's 'connect' (emitted before the first hand-over);
 * the failure still reaches the query or the commit that meets the dead connection.
 */
async function pool(settings: OrmStoreSettings): Promise<pg.Pool> {
  const { default: pgModule } = await import('pg');
  const created = new pgModule.Pool({
    connectionString: settings.url,
    application_name: settings.applicationName,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.connectTimeoutMs,
  });
  created.on('error', () => {});
  created.on('connect', (client) => client.on('error', () => {}));
  return created;
}

// The inserted columns; backend and tx_started_ms say which connection and which transaction wrote the row.
const COLUMNS = '(key, id, token, pid, server, at_ms, backend, tx_started_ms)';
const FROM_DATABASE = 'pg_backend_pid(), (extract(epoch FROM now()) * 1000)::bigint';

export async function openOrmStore(
  kind: OrmStoreKind,
  settings: OrmStoreSettings,
): Promise<OrmStoreUnderTest> {
  const { schema, payments } = settings;
  switch (kind) {
    case 'postgres-kysely': {
      const { Kysely, PostgresDialect, sql } = await import('kysely');
      const { KyselyStore } = await import('../src/orm/kysely/index.js');
      const db = new Kysely<Record<string, never>>({
        dialect: new PostgresDialect({ pool: await pool(settings) }),
      });
      const store = new KyselyStore({ db, schema });
      return {
        store,
        async pay(context, p) {
          await sql`INSERT INTO ${sql.raw(payments)} ${sql.raw(COLUMNS)}
            VALUES (${p.key}, ${p.id}, ${p.token}, ${p.pid}, ${p.server}, ${p.at}, ${sql.raw(FROM_DATABASE)})`.execute(
            store.transactionOf(context),
          );
        },
        close: () => db.destroy(),
      };
    }
    case 'postgres-drizzle': {
      const { drizzle } = await import('drizzle-orm/node-postgres');
      const { sql } = await import('drizzle-orm');
      const { DrizzleStore } = await import('../src/orm/drizzle/index.js');
      const client = await pool(settings);
      const store = new DrizzleStore({ db: drizzle({ client }), schema });
      return {
        store,
        async pay(context, p) {
          await store.transactionOf(context).execute(
            sql`INSERT INTO ${sql.raw(payments)} ${sql.raw(COLUMNS)}
                VALUES (${p.key}, ${p.id}, ${p.token}, ${p.pid}, ${p.server}, ${p.at}, ${sql.raw(FROM_DATABASE)})`,
          );
        },
        close: () => client.end(),
      };
    }
    case 'postgres-prisma': {
      const { PrismaPg } = await import('@prisma/adapter-pg');
      const { PrismaClient } = await import('../test/orm/prisma/generated/client.js');
      const { PrismaStore } = await import('../src/orm/prisma/index.js');
      // Our pool, not a config: the adapter listens to a transaction's connection only after `await pool.connect()`
      // resumes, a microtask after pg-pool dropped its own listener, and a FATAL read in that gap crashed an app
      // server (found by this proof). The pool's 'connect' listener is there before the first hand-over.
      const client = await pool(settings);
      const prisma = new PrismaClient({ adapter: new PrismaPg(client, { schema }) });
      const store = new PrismaStore({ prisma, schema });
      return {
        store,
        async pay(context, p) {
          // Explicit casts: Prisma types untyped parameters from the JS value (a ms timestamp is no int4).
          await store
            .transactionOf(context)
            .$executeRawUnsafe(
              `INSERT INTO ${payments} ${COLUMNS} VALUES ($1, $2, $3::bigint, $4::int, $5, $6::bigint, ${FROM_DATABASE})`,
              p.key,
              p.id,
              p.token,
              p.pid,
              p.server,
              p.at,
            );
        },
        async close() {
          await prisma.$disconnect();
          await client.end();
        },
      };
    }
  }
}
