import { migrate as migrateOutbox } from '../../messaging/outbox/migrate.js';
import { migrate as migrateKeys, schemaFor } from '../../stores/postgres/migrate.js';
import { parseOptions } from '../args.js';
import { openPool } from '../postgres-pool.js';

export const migrateHelp = `oncely migrate [--schema public] [--table oncely_keys] [--print]

  Creates the PostgreSQL tables oncely needs (idempotency keys, and the outbox) if they are missing, in
  DATABASE_URL. Safe to run on every deploy and from several processes at once; it never drops anything.
  --print writes the keys table's DDL to stdout instead, for your own migration tool.`;

export async function migrate(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('migrate', argv, {
    schema: { type: 'string' },
    table: { type: 'string' },
    print: { type: 'boolean' },
  });
  const keys = {
    ...(values.schema ? { schema: values.schema } : {}),
    ...(values.table ? { table: values.table } : {}),
  };
  if (values.print) {
    process.stdout.write(`${schemaFor(keys)}\n`);
    return;
  }
  const { pool, url } = await openPool();
  try {
    await migrateKeys(pool, keys);
    await migrateOutbox(pool, values.schema ? { schema: values.schema } : {});
    process.stdout.write(
      `migrated ${url}: ${values.schema ?? 'public'}.${values.table ?? 'oncely_keys'} and the outbox\n`,
    );
  } finally {
    await pool.end();
  }
}
