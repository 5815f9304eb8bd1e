import { migrate as migrateOutbox } from '../../messaging/outbox/migrate.js';
import { migrate as migrateKeys, schemaFor } from '../../stores/postgres/index.js';
import { parseOptions } from '../args.js';
import { outboxDdl } from '../outbox-ddl.js';
import { keysTable, outboxSchema } from '../postgres-location.js';
import { openPool } from '../postgres-pool.js';

export const migrateHelp = `oncely migrate [--schema public] [--table oncely_keys] [--print]

  Creates the PostgreSQL tables oncely needs if they are missing, in DATABASE_URL: the idempotency keys table
  (--table names it) and the outbox (always oncely_outbox), both in --schema. Safe to run on every deploy and from
  several processes at once; it never drops anything. --print writes the DDL of both to stdout instead, for your
  own migration tool.`;

export async function migrate(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('migrate', argv, {
    schema: { type: 'string' },
    table: { type: 'string' },
    print: { type: 'boolean' },
  });
  // Both checked before anything runs: a schema name the keys table accepts but the outbox does not (it takes
  // plain identifiers only) would otherwise leave the keys table created and the outbox missing.
  const keys = keysTable(values);
  const outbox = outboxSchema(values.schema);
  const keysOptions = { schema: keys.schema, table: keys.table };
  if (values.print) {
    process.stdout.write(
      `-- oncely: idempotency keys, ${keys.qualified}\n${schemaFor(keysOptions).trim()}\n\n` +
        `-- oncely: transactional outbox, ${outbox.qualified}\n${outboxDdl(outbox.schema)}`,
    );
    return;
  }
  const { pool, url } = await openPool();
  try {
    await migrateKeys(pool, keysOptions);
    await migrateOutbox(pool, { schema: outbox.schema });
    process.stdout.write(`migrated ${url}: ${keys.qualified} and ${outbox.qualified}\n`);
  } finally {
    await pool.end();
  }
}
