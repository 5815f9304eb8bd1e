/**
 * @module `oncely stats`: records by state and their bytes, for Redis, PostgreSQL, MySQL or DynamoDB.
 */
import { parseOptions } from '../args.js';
import { openStore } from '../open-store.js';
import { renderTable } from '../table.js';
import { POSTGRES_TABLE_NOTE, recordStore } from './inspect.js';

export const statsHelp = `oncely stats --store redis|postgres|mysql|dynamodb [--prefix oncely] [--schema public]
             [--table oncely_keys]

  Counts records by state (in progress, completed, released) and, where the store can tell, the bytes they use.
  On DynamoDB: the table's item count and size as DescribeTable gives them (DynamoDB's estimate, refreshed about
  every six hours), no counts by state.
  ${POSTGRES_TABLE_NOTE}`;

export async function stats(argv: readonly string[]): Promise<void> {
  const { values } = parseOptions('stats', argv, {
    store: { type: 'string' },
    prefix: { type: 'string' },
    schema: { type: 'string' },
    table: { type: 'string' },
  });
  const opened = await openStore(recordStore('stats', values.store), {
    prefix: values.prefix,
    schema: values.schema,
    table: values.table,
  });
  try {
    if (opened.store.stats === undefined) {
      process.stdout.write(`${opened.store.name} does not report statistics\n`);
      return;
    }
    const s = await opened.store.stats();
    const show = (n: number | undefined) => (n === undefined ? '-' : String(n));
    process.stdout.write(
      `${renderTable(
        ['store', 'records', 'in progress', 'completed', 'released', 'bytes'],
        [
          [
            opened.description,
            show(s.records),
            show(s.inProgress),
            show(s.completed),
            show(s.released),
            show(s.bytes),
          ],
        ],
      )}\n`,
    );
  } finally {
    await opened.close();
  }
}
