/**
 * @module `oncely migrate`: creates the PostgreSQL keys table and outbox (or the MySQL store's table and procedures,
 * or the DynamoDB store's table) when missing, or prints their DDL.
 */
import { migrate as migrateOutbox, mysqlOutboxDdl } from '../../messaging/outbox/index.js';
import { migrate as migrateMySql, schemaFor as mySqlSchemaFor } from '../../stores/mysql/index.js';
import { migrate as migrateKeys, schemaFor } from '../../stores/postgres/index.js';
import { choiceOption, parseOptions } from '../args.js';
import { describeDynamoDbTable, dynamoDbStoreOn, openDynamoDb } from '../dynamodb-client.js';
import { CommandFailed, UsageError } from '../errors.js';
import { openMySqlPool } from '../mysql-pool.js';
import { outboxDdl } from '../outbox-ddl.js';
import { keysTable, outboxSchema } from '../postgres-location.js';
import { openPool } from '../postgres-pool.js';

export const migrateHelp = `oncely migrate [--schema public] [--table oncely_keys] [--print]
oncely migrate --store mysql [--table oncely_keys] [--print]
oncely migrate --store dynamodb [--table oncely_keys]

  Creates the PostgreSQL tables oncely needs if they are missing, in DATABASE_URL: the idempotency keys table
  (--table names it) and the outbox (always oncely_outbox), both in --schema. Safe to run on every deploy and from
  several processes at once; it never drops anything. --print writes the DDL of both to stdout instead, for your
  own migration tool. --store mysql creates the MySQL store's table and its two procedures in the database of
  MYSQL_URL (mysql://root@127.0.0.1:3306/test by default), and the transactional outbox's two tables beside it,
  instead. --store dynamodb creates the DynamoDB store's table (on-demand capacity, TTL on ttl) and waits until it
  is active, through the AWS SDK's environment (AWS_REGION, credentials, AWS_ENDPOINT_URL_DYNAMODB); for
  production, docs/stores/dynamodb.md gives the same table for CloudFormation and CDK.`;

export async function migrate(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('migrate', argv, {
    store: { type: 'string' },
    schema: { type: 'string' },
    table: { type: 'string' },
    print: { type: 'boolean' },
  });
  const store = choiceOption('store', values.store, ['postgres', 'mysql', 'dynamodb'] as const, 'postgres');
  if (store === 'mysql') return migrateMySqlTable(values.table, values.schema, values.print === true);
  if (store === 'dynamodb') return migrateDynamoDbTable(values.table, values.schema, values.print === true);
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

/** The MySQL store's table and procedures, in MYSQL_URL's database (MySQL has no schemas within a database). */
async function migrateMySqlTable(value: string | undefined, schema: string | undefined, print: boolean) {
  if (schema !== undefined) {
    throw new UsageError(
      '--schema goes with PostgreSQL; on MySQL the table lives in the database of MYSQL_URL',
    );
  }
  const table = value ?? 'oncely_keys';
  try {
    mySqlSchemaFor({ table }); // the store's own check of the name, before anything is dialled
  } catch (error) {
    throw new UsageError(`--table "${value}" is not valid: ${(error as Error).message}`);
  }
  if (print) {
    process.stdout.write(`-- oncely: idempotency keys, ${table}\n${mySqlSchemaFor({ table })}`);
    process.stdout.write(`-- oncely: transactional outbox\n${mysqlOutboxDdl()}`);
    return;
  }
  const { pool, url } = await openMySqlPool();
  try {
    await migrateMySql(pool, { table });
    await migrateOutbox(pool);
    process.stdout.write(
      `migrated ${url}: ${table} and its procedures, oncely_outbox and oncely_outbox_keys\n`,
    );
  } finally {
    await pool.end();
  }
}

/**
 * The DynamoDB store's table, through the store's own `migrate()` (the same table its page shows for CloudFormation
 * and CDK). There is no DDL to print: the table is an API call.
 */
async function migrateDynamoDbTable(value: string | undefined, schema: string | undefined, print: boolean) {
  if (schema !== undefined) throw new UsageError('--schema goes with PostgreSQL; DynamoDB takes --table');
  if (print) {
    throw new UsageError(
      '--print goes with PostgreSQL and MySQL: a DynamoDB table has no DDL (docs/stores/dynamodb.md gives it for CloudFormation and CDK)',
    );
  }
  const opened = await openDynamoDb();
  try {
    const store = await dynamoDbStoreOn(opened, value);
    // Reached first, so a wrong region, credentials or endpoint reads as such rather than as migrate's failure.
    const { shown } = await describeDynamoDbTable(opened, store.table);
    let result: Awaited<ReturnType<typeof store.migrate>>;
    try {
      result = await store.migrate();
    } catch (error) {
      // A table of that name with another key schema or TTL attribute, or a call refused (permissions).
      throw new CommandFailed(`cannot migrate ${store.table} at ${shown}: ${(error as Error).message}`);
    }
    const ttl =
      result.ttl === 'enabled'
        ? 'TTL on ttl'
        : 'no TTL (this endpoint has no TTL API; expired records stay as items, read as expired)';
    process.stdout.write(
      `migrated dynamodb ${shown}: ${store.table} ${result.created ? 'created' : 'was there'}, ${ttl}\n`,
    );
  } finally {
    opened.client.destroy();
  }
}
