import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type Outcome } from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { requireService, services } from '../support/services.js';
import { expectCleanFailure, oncely } from './support/cli.js';

const hex = () => randomBytes(4).toString('hex');
const outcome: Outcome = {
  status: 201,
  headers: [['content-type', 'application/json']],
  body: Buffer.from('{"id":"pay_cli"}'),
};

describe('CLI on PostgreSQL: where the tables are, and never creating them by accident', () => {
  const schema = `oncely_cli_pg_${hex()}`;
  const created = [schema];
  let pool: pg.Pool;

  beforeAll(async () => {
    await requireService('postgres');
    pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
    expect((await oncely(['migrate', '--schema', schema])).code).toBe(0);
  });

  afterAll(async () => {
    for (const name of created) await pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await pool.end();
  });

  const schemaExists = async (name: string) =>
    (await pool.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [name]))
      .rowCount === 1;
  const tablesOf = async (name: string) =>
    (
      await pool.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
        [name],
      )
    ).rows.map((row) => row.table_name);

  it('stats, inspect and purge on a missing schema fail with the migrate hint (exit 1) and create nothing', async () => {
    const missing = `oncely_cli_missing_${hex()}`;
    created.push(missing); // dropped after the test should the guard ever break
    for (const command of [['stats'], ['inspect', '--hashed', 'x'], ['purge']]) {
      expectCleanFailure(
        await oncely([...command, '--store', 'postgres', '--schema', missing]),
        1,
        new RegExp(
          `there is no table "${missing}"."oncely_keys" in postgres://\\S+; run: oncely migrate --schema ${missing}$`,
          'm',
        ),
      );
    }
    expect(await schemaExists(missing)).toBe(false);
  });

  it('a missing table in an existing schema fails with a hint that carries --table, and creates nothing', async () => {
    for (const command of [['stats'], ['inspect', '--hashed', 'x'], ['purge']]) {
      expectCleanFailure(
        await oncely([...command, '--store', 'postgres', '--schema', schema, '--table', 'no such keys']),
        1,
        new RegExp(`run: oncely migrate --schema ${schema} --table 'no such keys'$`, 'm'),
      );
    }
    expect(await tablesOf(schema)).toEqual(['oncely_keys', 'oncely_outbox']);
  });

  it('--schema and --table pick the keys table for migrate, stats, inspect and purge alike', async () => {
    expect((await oncely(['migrate', '--schema', schema, '--table', 'custom_keys'])).code).toBe(0);
    expect(await tablesOf(schema)).toEqual(['custom_keys', 'oncely_keys', 'oncely_outbox']);
    const store = new PostgresStore({ pool, schema, table: 'custom_keys', listen: false });
    await new Engine({ store }).execute({
      key: scopedKey('POST /payments', 'order-9'),
      fingerprint: 'f',
      run: async () => outcome,
      settle: (o) => ({ keep: true, outcome: o }),
    });
    const at = ['--store', 'postgres', '--schema', schema, '--table', 'custom_keys'];
    expect((await oncely(['stats', ...at])).stdout).toMatch(/postgres \S+\s+1\s+0\s+1\s+0\s/);
    const shown = await oncely(['inspect', ...at, '--scope', 'POST /payments', '--key', 'order-9']);
    expect(shown.stdout).toMatch(/state\s+completed/);
    expect(shown.stdout).toContain('{"id":"pay_cli"}');
    for (const key of ['x', 'y']) {
      const begun = await store.begin({ key, fingerprint: 'f', leaseMs: 1_000, retentionMs: 1 });
      expect(begun.kind).toBe('acquired');
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await oncely(['purge', ...at])).stdout).toMatch(/removed 2 expired records/);
    // the default table of the schema was not the one looked at
    expect((await oncely(['stats', '--store', 'postgres', '--schema', schema])).stdout).toMatch(
      /postgres \S+\s+0\s+0\s+0\s+0\s/,
    );
  });

  it('flags of the other store, and --table on the outbox, are usage errors that say where they belong', async () => {
    expectCleanFailure(
      await oncely(['stats', '--store', 'redis', '--table', 'keys']),
      2,
      /--schema and --table go with --store postgres; Redis takes --prefix/,
    );
    expectCleanFailure(
      await oncely(['inspect', '--store', 'postgres', '--prefix', 'p', '--hashed', 'x']),
      2,
      /--prefix goes with --store redis; PostgreSQL takes --schema and --table/,
    );
    expectCleanFailure(
      await oncely(['outbox', 'stats', '--table', 'events']),
      2,
      /outbox: unknown option --table \(the outbox table is always oncely_outbox; --schema picks where it is\)/,
    );
    expectCleanFailure(
      await oncely(['stats', '--store', 'postgres', '--schema', '']),
      2,
      /--schema "" is not valid/,
    );
    expectCleanFailure(
      await oncely(['migrate', '--schema', 'two words']),
      2,
      /--schema "two words" is not valid/,
    );
    expect(await schemaExists('two words')).toBe(false);
  });

  it('outbox commands on a missing schema fail with the migrate hint (exit 1) and create nothing', async () => {
    const missing = `oncely_cli_missing_${hex()}`;
    created.push(missing);
    for (const action of [['stats'], ['dead'], ['purge'], ['replay', '--all'], ['discard', '--id', '1']]) {
      expectCleanFailure(
        await oncely(['outbox', ...action, '--schema', missing]),
        1,
        new RegExp(
          `there is no table "${missing}".oncely_outbox in \\S+; run: oncely migrate --schema ${missing}$`,
          'm',
        ),
      );
    }
    expect(await schemaExists(missing)).toBe(false);
  });

  it('outbox replay and discard: a malformed id is a usage error; an id that is no dead letter fails naming it', async () => {
    for (const id of ['abc', '-1', '0', '1.5', '99999999999999999999', '9223372036854775808']) {
      expectCleanFailure(
        await oncely(['outbox', 'replay', '--schema', schema, `--id=${id}`]),
        2,
        new RegExp(
          `outbox replay: --id takes the numeric id of a dead letter .*, got "${id.replace('.', '\\.')}"`,
        ),
      );
    }
    expectCleanFailure(
      await oncely(['outbox', 'discard', '--id', '1', '--all']),
      2,
      /give --id or --all, not both/,
    );
    expectCleanFailure(
      await oncely(['outbox', 'replay', '--id', '1', '--topic', 't']),
      2,
      /--topic goes with --all/,
    );
    expectCleanFailure(
      await oncely(['outbox', 'frob']),
      2,
      /outbox: unknown action "frob"; actions: stats, /,
    );
    expectCleanFailure(
      await oncely(['outbox', 'replay', '--all', '--topic', '']),
      2,
      /--topic must not be empty/,
    );

    const dead = async () =>
      (
        await pool.query<{ id: string }>(
          `INSERT INTO "${schema}".oncely_outbox (topic, payload, content_type, state, attempts, dead_at)
           VALUES ('payment.created', '\\x7b7d', 'application/json', 2, 10, now()) RETURNING id::text AS id`,
        )
      ).rows[0]!.id;
    const first = await dead();
    const replayed = await oncely(['outbox', 'replay', '--schema', schema, '--id', first, '--id', '424242']);
    expect(replayed.stdout).toBe('replayed 1 dead letters\n');
    expectCleanFailure(
      replayed,
      1,
      /outbox replay: not dead letters \(unknown ids, or replayed or discarded already\): 424242;/,
    );
    // replayed, it is pending now: discarding it is refused by name, and it stays
    expectCleanFailure(
      await oncely(['outbox', 'discard', '--schema', schema, '--id', first]),
      1,
      new RegExp(`not dead letters .*: ${first};`),
    );
    const second = await dead();
    expect(await oncely(['outbox', 'discard', '--schema', schema, '--id', second])).toEqual({
      code: 0,
      stdout: 'discarded 1 dead letters\n',
      stderr: '',
    });
    expect(
      (await pool.query(`SELECT id::text, state FROM "${schema}".oncely_outbox ORDER BY id`)).rows,
    ).toEqual([{ id: first, state: 0 }]);
  });

  it('migrate --print prints the keys and outbox DDL, and running it builds exactly what migrate builds', async () => {
    const printedSchema = `oncely_cli_printed_${hex()}`;
    const migratedSchema = `oncely_cli_migrated_${hex()}`;
    created.push(printedSchema, migratedSchema);
    const printed = await oncely(['migrate', '--print', '--schema', printedSchema, '--table', 'keys']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain(`CREATE TABLE IF NOT EXISTS "${printedSchema}"."keys"`);
    // The outbox part is migrate()'s own script: in its transaction, with the schema as its search_path.
    expect(printed.stdout).toContain(`SET LOCAL search_path TO "${printedSchema}"`);
    expect(printed.stdout).toContain('CREATE TABLE IF NOT EXISTS oncely_outbox');
    expect(await schemaExists(printedSchema)).toBe(false); // --print only prints
    await pool.query(printed.stdout);
    await pool.query(printed.stdout); // idempotent, like migrate
    expect((await oncely(['migrate', '--schema', migratedSchema, '--table', 'keys'])).code).toBe(0);
    expect(await catalog(pool, printedSchema)).toEqual(await catalog(pool, migratedSchema));
  });
});

/** Tables, columns, constraints, indexes and storage settings of a schema, with the schema's name taken out. */
async function catalog(pool: pg.Pool, schema: string): Promise<unknown> {
  const rows = async (sql: string) =>
    JSON.parse(JSON.stringify((await pool.query(sql, [schema])).rows).replaceAll(schema, 'SCHEMA'));
  return {
    columns: await rows(
      `SELECT table_name, column_name, data_type, is_nullable, column_default, collation_name, is_identity,
              identity_generation
       FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
    ),
    constraints: await rows(
      `SELECT conrelid::regclass::text AS table_name, conname, pg_get_constraintdef(oid) AS definition
       FROM pg_constraint WHERE connamespace = $1::regnamespace ORDER BY 1, 2`,
    ),
    indexes: await rows(
      'SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 1, 2',
    ),
    tables: await rows(
      `SELECT c.relname, c.reloptions, a.attname, a.attstorage
       FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r' ORDER BY 1, 3`,
    ),
  };
}
