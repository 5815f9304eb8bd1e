import {
  discardDeadLetters,
  listDeadLetters,
  outboxStats,
  purgePublished,
  replayDeadLetters,
} from '../../messaging/outbox/index.js';
import { intOption, parseOptions } from '../args.js';
import { UsageError } from '../errors.js';
import { openPool } from '../postgres-pool.js';
import { renderTable } from '../table.js';

export const outboxHelp = `oncely outbox stats [--schema public]
oncely outbox dead [--topic T] [--limit 100]
oncely outbox replay (--id ID ... | --all [--topic T])
oncely outbox discard (--id ID ... | --all [--topic T])
oncely outbox purge [--older-than-ms 3600000]

  Operates the transactional outbox in DATABASE_URL: pending / in-flight / dead counts and the age of the oldest
  pending event; dead letters listed, replayed (back to pending, attempts reset) or discarded; published rows
  removed in bounded batches.`;

export async function outboxCommand(argv: readonly string[]): Promise<void> {
  const { values, positionals } = parseOptions(
    'outbox',
    argv,
    {
      schema: { type: 'string' },
      topic: { type: 'string' },
      limit: { type: 'string' },
      id: { type: 'string', multiple: true },
      all: { type: 'boolean' },
      'older-than-ms': { type: 'string' },
    },
    { positionals: ['action'] },
  );
  const [action] = positionals;
  const schema = values.schema ? { schema: values.schema } : {};
  const { pool } = await openPool();
  try {
    if (action === 'stats') {
      const s = await outboxStats(pool, schema);
      process.stdout.write(
        `${renderTable(
          ['pending', 'in flight', 'retrying', 'published', 'dead', 'oldest pending (ms)', 'max attempts'],
          [[s.pending, s.inFlight, s.retrying, s.published, s.dead, s.oldestPendingAgeMs, s.maxAttempts]],
        )}\n`,
      );
    } else if (action === 'dead') {
      const limit = intOption('limit', values.limit, 100, 1, 10_000);
      const letters = await listDeadLetters(pool, {
        ...schema,
        limit,
        ...(values.topic ? { topic: values.topic } : {}),
      });
      process.stdout.write(
        `${renderTable(
          ['id', 'topic', 'key', 'attempts', 'dead at', 'last error'],
          letters.map((d) => [
            d.id,
            d.topic,
            d.key ?? '-',
            d.attempts,
            d.deadAt.toISOString(),
            (d.lastError ?? '').slice(0, 60),
          ]),
        )}\n`,
      );
    } else if (action === 'replay' || action === 'discard') {
      const selection = values.all
        ? { all: true as const, ...(values.topic ? { topic: values.topic } : {}) }
        : { ids: values.id ?? [] };
      if (!values.all && (values.id ?? []).length === 0)
        throw new UsageError(`outbox ${action}: give --id ID (repeatable) or --all`);
      const count =
        action === 'replay'
          ? await replayDeadLetters(pool, selection, schema)
          : await discardDeadLetters(pool, selection, schema);
      process.stdout.write(`${action === 'replay' ? 'replayed' : 'discarded'} ${count} dead letters\n`);
    } else if (action === 'purge') {
      const olderThanMs = intOption(
        'older-than-ms',
        values['older-than-ms'],
        3_600_000,
        0,
        Number.MAX_SAFE_INTEGER,
      );
      const removed = await purgePublished(pool, { ...schema, olderThanMs });
      process.stdout.write(`removed ${removed} published rows\n`);
    } else {
      throw new UsageError(`outbox: give an action: stats, dead, replay, discard or purge`);
    }
  } finally {
    await pool.end();
  }
}
