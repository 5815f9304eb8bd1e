/**
 * docs/orm/drizzle.md's migration path, run as a user runs it: `oncely migrate --print` pasted into a custom
 * migration (what `drizzle-kit generate --custom` makes: a `.sql` file and its journal entry), applied by Drizzle's
 * migrator on each driver, and a DrizzleStore claiming on the tables it made. drizzle-kit itself is not installed
 * here; its `migrate` command applies files with the same migrator drizzle-orm exports.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgresJs } from 'drizzle-orm/postgres-js/migrator';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotent } from '../../../src/index.js';
import { DrizzleStore } from '../../../src/orm/drizzle/index.js';
import { requireService, services } from '../../support/services.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** What `npx oncely migrate --schema <schema> --print` writes, from the CLI's own entry point. */
async function printedMigration(schema: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'migrate', '--schema', schema, '--print'],
    { cwd: repoRoot },
  );
  return stdout;
}

/** A drizzle-kit migrations folder with one custom migration holding `sql` (drizzle-kit 0.x's layout). */
async function migrationsFolder(sql: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'oncely-drizzle-'));
  await mkdir(join(folder, 'meta'));
  const journal = {
    version: '7',
    dialect: 'postgresql',
    entries: [{ idx: 0, version: '7', when: Date.now(), tag: '0000_oncely', breakpoints: true }],
  };
  await writeFile(join(folder, 'meta', '_journal.json'), JSON.stringify(journal));
  await writeFile(
    join(folder, '0000_oncely.sql'),
    `-- Custom SQL migration file, put your code below! --\n${sql}`,
  );
  return folder;
}

describe('a drizzle-kit custom migration holding `oncely migrate --print`', () => {
  const admin = new pg.Pool({ connectionString: services.postgres.url, max: 1 });
  const schemas: string[] = [];
  const folders: string[] = [];

  beforeAll(() => requireService('postgres'));
  afterAll(async () => {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  const tablesIn = async (schema: string) =>
    (
      await admin.query<{ tablename: string }>(
        'SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename',
        [schema],
      )
    ).rows.map((row) => row.tablename);

  it.each(['node-postgres', 'postgres-js'] as const)(
    "Drizzle's migrator on %s makes the tables, and the store claims on them",
    async (driver) => {
      const label = randomBytes(4).toString('hex');
      const schema = `oncely_test_drizzle_migration_${label}`;
      const journal = `oncely_test_drizzle_journal_${label}`;
      schemas.push(schema, journal);
      const folder = await migrationsFolder(await printedMigration(schema));
      folders.push(folder);
      const config = { migrationsFolder: folder, migrationsSchema: journal };

      let db: ReturnType<typeof drizzleNodePg> | ReturnType<typeof drizzlePostgresJs>;
      let end: () => Promise<void>;
      if (driver === 'node-postgres') {
        const pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
        const nodePgDb = drizzleNodePg({ client: pool });
        await migrateNodePg(nodePgDb, config);
        db = nodePgDb;
        end = () => pool.end();
      } else {
        const sql = postgres(services.postgres.url, { max: 2, onnotice: () => {} });
        const postgresJsDb = drizzlePostgresJs({ client: sql });
        await migratePostgresJs(postgresJsDb, config);
        db = postgresJsDb;
        end = () => sql.end();
      }
      try {
        expect(await tablesIn(schema)).toEqual(['oncely_keys', 'oncely_outbox']);
        const store = new DrizzleStore({ db, schema });
        const pay = idempotent(async (id: string) => ({ paid: id }), {
          store,
          scope: 'pay',
          key: (id) => id,
        });
        expect(await pay.execute('m-1')).toEqual({ value: { paid: 'm-1' }, replayed: false });
        expect(await pay.execute('m-1')).toEqual({ value: { paid: 'm-1' }, replayed: true });
      } finally {
        await end();
      }
    },
  );
});
