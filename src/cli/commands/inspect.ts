/**
 * @module `oncely inspect`: one record by scope and key (or storage key), read through the store's inspector, and
 * `--delete` to unblock it.
 */
import { scopedKey } from '../../core/key.js';
import { defaultEnvelopeOptions, openOutcome } from '../../core/record.js';
import { choiceOption, parseOptions } from '../args.js';
import { UsageError } from '../errors.js';
import { inspectorOf, openStore, type StoreKind } from '../open-store.js';
import { renderTable } from '../table.js';

/** How the commands that read or maintain PostgreSQL records treat a missing table (the three helps say it). */
export const POSTGRES_TABLE_NOTE =
  'On PostgreSQL nothing is created: a missing schema or table fails, naming the oncely migrate command to run.\n' +
  "  MySQL (MYSQL_URL) and DynamoDB (the AWS SDK's environment: AWS_REGION, credentials, AWS_ENDPOINT_URL_DYNAMODB)\n" +
  '  take --table, and are treated the same way.';

export const inspectHelp = `oncely inspect --store redis|postgres|mysql|dynamodb (--key KEY --scope SCOPE | --hashed STORAGE_KEY)
               [--prefix oncely | --schema public --table oncely_keys] [--delete]

  Shows the record of one key: the route or scope it belongs to, state, fingerprint, fencing token, attempts,
  lease and expiry, and the stored response (status, headers, the first 2 KiB of the body). --delete removes it,
  so the next request runs again.
  ${POSTGRES_TABLE_NOTE}`;

export async function inspect(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('inspect', argv, {
    store: { type: 'string' },
    key: { type: 'string' },
    scope: { type: 'string' },
    hashed: { type: 'string' },
    prefix: { type: 'string' },
    schema: { type: 'string' },
    table: { type: 'string' },
    delete: { type: 'boolean' },
  });
  const kind = recordStore('inspect', values.store);
  const storageKey =
    values.hashed ??
    (values.key !== undefined && values.scope !== undefined
      ? scopedKey(values.scope, values.key)
      : undefined);
  if (storageKey === undefined) throw new UsageError('inspect: give --key and --scope, or --hashed');
  const opened = await openStore(kind, {
    prefix: values.prefix,
    schema: values.schema,
    table: values.table,
  });
  try {
    // Through the store's inspector, as every tool reads records: the body comes because it is asked for.
    const record = await inspectorOf(opened.store).record(storageKey, { body: true });
    if (record === undefined) {
      process.stdout.write(`no record for ${storageKey}\n`);
      return;
    }
    const time = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString());
    process.stdout.write(
      `${renderTable(
        ['field', 'value'],
        [
          ['storage key', record.key],
          // What the key belongs to (its first claim's route or scope); never the key or the client's identity.
          ['route / scope', record.label ?? '-'],
          ['state', record.state],
          ['fingerprint', record.fingerprint],
          ['fencing token', String(record.token)],
          ['attempts', String(record.attempt)],
          ['created', time(record.createdAt)],
          ['lease until', time(record.leaseUntil)],
          ['completed', time(record.completedAt)],
          ['expires', time(record.expiresAt)],
        ],
      )}\n`,
    );
    if (record.outcome !== undefined) {
      const { body = new Uint8Array(0) } = record.outcome;
      const opened = await openOutcome({ ...record.outcome, body }, defaultEnvelopeOptions);
      process.stdout.write(
        `\nstatus ${record.outcome.status}, body stored ${record.outcome.storage} (${record.outcome.encoding})\n`,
      );
      for (const [name, value] of record.outcome.headers) process.stdout.write(`${name}: ${value}\n`);
      if (opened.retained)
        process.stdout.write(`\n${Buffer.from(opened.outcome.body.subarray(0, 2048)).toString('utf8')}\n`);
    }
    if (values.delete) {
      await opened.store.delete(storageKey);
      process.stdout.write('\ndeleted: the next request with this key runs again\n');
    }
  } finally {
    await opened.close();
  }
}

/**
 * The stores whose records the record commands (inspect, stats, purge) and the dashboard read: every one but the
 * memory store, which lives inside the application's process where the CLI cannot see it.
 */
export function recordStore(command: string, value: string | undefined): Exclude<StoreKind, 'memory'> {
  if (value === undefined || value === 'memory') {
    throw new UsageError(
      `${command}: give --store redis or --store postgres, mysql or dynamodb (the memory store lives inside your application's process)`,
    );
  }
  return choiceOption('store', value, ['redis', 'postgres', 'mysql', 'dynamodb'] as const, 'redis');
}
