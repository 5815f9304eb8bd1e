import { randomBytes } from 'node:crypto';
import createKnex from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotent } from '../../src/index.js';
import { KnexStore } from '../../src/orm/knex/index.js';
import { KyselyStore } from '../../src/orm/kysely/index.js';
import type { OrmStore } from '../../src/orm/orm-store.js';
import { splitStatements } from '../../src/orm/split-statements.js';
import { schemaFor } from '../../src/stores/postgres/index.js';
import { requireService, services } from '../support/services.js';

// store.migrate() through an ORM: oncely's DDL as single statements (Kysely takes one per call) or one message (Knex),
// under the migration lock, idempotent; the table it makes is the one `migrate(pool)` makes.
let pool: pg.Pool;
const schemas: string[] = [];

beforeAll(async () => {
  await requireService('postgres');
  pool = new pg.Pool({ connectionString: services.postgres.url, max: 4 });
});
afterAll(async () => {
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool?.end();
});

const columnsOf = async (schema: string) =>
  (
    await pool.query(
      `SELECT column_name, data_type FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = 'oncely_keys' ORDER BY column_name`,
      [schema],
    )
  ).rows;

describe('store.migrate() through an ORM', () => {
  it('splits the DDL into whole statements, keeping the DO blocks whole', () => {
    const statements = splitStatements(schemaFor({ schema: 'app' }));
    expect(statements.length).toBeGreaterThan(3);
    for (const statement of statements) {
      expect(statement.endsWith(';')).toBe(false);
      // A DO block's body holds semicolons: it stays one statement with both of its quotes.
      if (statement.startsWith('DO ')) expect(statement.match(/\$oncely\$/g)).toHaveLength(2);
    }
  });

  const stores: [string, (schema: string) => { store: OrmStore<unknown>; close(): Promise<void> }][] = [
    [
      'Kysely (one statement per call)',
      (schema) => {
        const db = new Kysely<Record<string, never>>({
          dialect: new PostgresDialect({
            pool: new pg.Pool({ connectionString: services.postgres.url, max: 2 }),
          }),
        });
        return {
          store: new KyselyStore({ db, schema }) as OrmStore<unknown>,
          close: () => db.destroy(),
        };
      },
    ],
    [
      'Knex (one message)',
      (schema) => {
        const knex = createKnex({
          client: 'pg',
          connection: services.postgres.url,
          pool: { min: 0, max: 2 },
        });
        return {
          store: new KnexStore({ knex, schema }) as OrmStore<unknown>,
          close: () => knex.destroy(),
        };
      },
    ],
  ];

  it.each(stores)(
    '%s: makes the table migrate(pool) makes, twice without harm, and claims on it',
    async (_, open) => {
      const schema = `oncely_test_orm_migrate_${randomBytes(4).toString('hex')}`;
      const reference = `${schema}_ref`;
      schemas.push(schema, reference);
      const { store, close } = open(schema);
      try {
        await store.migrate();
        await store.migrate();
        await pool.query(schemaFor({ schema: reference }));
        expect(await columnsOf(schema)).toEqual(await columnsOf(reference));
        const once = idempotent(async () => 'done', {
          store: store as never,
          scope: 'migrate',
          key: (id: string) => id,
        });
        expect(await once.execute('m-1')).toEqual({ value: 'done', replayed: false });
        expect(await once.execute('m-1')).toEqual({ value: 'done', replayed: true });
      } finally {
        await close();
      }
    },
  );
});
