/**
 * @module `oncely purge`: deletes expired records of a SQL store in bounded batches, for a schedule.
 */
import { intOption, parseOptions } from '../args.js';
import { openStore } from '../open-store.js';
import { POSTGRES_TABLE_NOTE, recordStore } from './inspect.js';

export const purgeHelp = `oncely purge --store postgres|mysql [--schema public] [--table oncely_keys] [--batch-size 5000]
             [--max-batches 1000]

  Deletes expired records in bounded batches (short transactions, no long locks). Run it for PostgreSQL and MySQL
  on a schedule (cron, a Kubernetes CronJob). Redis and DynamoDB (its TTL) expire records by themselves:
  --store redis [--prefix oncely] and --store dynamodb [--table oncely_keys] say so.
  ${POSTGRES_TABLE_NOTE}`;

export async function purge(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('purge', argv, {
    store: { type: 'string' },
    prefix: { type: 'string' },
    schema: { type: 'string' },
    table: { type: 'string' },
    'batch-size': { type: 'string' },
    'max-batches': { type: 'string' },
  });
  const batchSize = intOption('batch-size', values['batch-size'], 5_000, 1, 1_000_000);
  const maxBatches = intOption('max-batches', values['max-batches'], 1_000, 1, 1_000_000);
  const opened = await openStore(recordStore('purge', values.store), {
    prefix: values.prefix,
    schema: values.schema,
    table: values.table,
  });
  try {
    if (opened.store.purgeExpired === undefined) {
      process.stdout.write(`${opened.store.name} expires records by itself; nothing to purge\n`);
      return;
    }
    const started = performance.now();
    const removed = await opened.store.purgeExpired({ batchSize, maxBatches });
    const seconds = (performance.now() - started) / 1_000;
    process.stdout.write(`removed ${removed} expired records in ${seconds.toFixed(2)} s\n`);
  } finally {
    await opened.close();
  }
}
