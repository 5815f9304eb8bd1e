/**
 * @module `oncely outbox`: the outbox's backlog and dead letters from the command line: stats, list, replay, discard,
 * purge.
 */
import type { Pool } from 'pg';
import {
  discardDeadLetters,
  listDeadLetters,
  outboxStats,
  purgePublished,
  replayDeadLetters,
} from '../../messaging/outbox/index.js';
import { intOption, parseOptions } from '../args.js';
import { CommandFailed, UsageError } from '../errors.js';
import { outboxSchema, requireTable, shellWord } from '../postgres-location.js';
import { openPool } from '../postgres-pool.js';
import { renderTable } from '../table.js';

export const outboxHelp = `oncely outbox stats [--schema public]
oncely outbox dead [--topic T] [--limit 100] [--schema public]
oncely outbox replay (--id ID ... | --all [--topic T]) [--schema public]
oncely outbox discard (--id ID ... | --all [--topic T]) [--schema public]
oncely outbox purge [--older-than-ms 3600000] [--schema public]

  Operates the transactional outbox in DATABASE_URL: pending / in-flight / dead counts and the age of the oldest
  pending event; dead letters listed, replayed (back to pending, attempts reset) or discarded; published rows
  removed in bounded batches. The table is always oncely_outbox (--schema picks where); it must exist: a missing
  one fails, naming the oncely migrate command to run. replay and discard exit 1 when an --id is not a dead letter.`;

const ACTIONS = ['stats', 'dead', 'replay', 'discard', 'purge'] as const;
type Action = (typeof ACTIONS)[number];

/** PostgreSQL's bigint ceiling: the outbox id column's type. */
const MAX_ID = 9_223_372_036_854_775_807n;

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
    {
      positionals: ['action'],
      unknownHints: { table: 'the outbox table is always oncely_outbox; --schema picks where it is' },
    },
  );
  // Everything the user typed is checked before a connection is opened: a typo never waits on a database.
  const action = outboxAction(positionals[0]);
  const { schema, qualified } = outboxSchema(values.schema);
  const schemaOption = values.schema === undefined ? {} : { schema };
  const limit = intOption('limit', values.limit, 100, 1, 10_000);
  const olderThanMs = intOption(
    'older-than-ms',
    values['older-than-ms'],
    3_600_000,
    0,
    Number.MAX_SAFE_INTEGER,
  );
  // `dead` would read an empty topic as no filter, `replay --all` as a topic that matches nothing.
  if (values.topic === '') throw new UsageError('outbox: --topic must not be empty');
  const ids = action === 'replay' || action === 'discard' ? selectedIds(action, values) : undefined;

  const { pool, url } = await openPool();
  try {
    await requireTable(
      pool,
      qualified,
      url,
      values.schema === undefined ? [] : ['--schema', shellWord(schema)],
    );
    if (action === 'stats') {
      const s = await outboxStats(pool, schemaOption);
      process.stdout.write(
        `${renderTable(
          ['pending', 'in flight', 'retrying', 'published', 'dead', 'oldest pending (ms)', 'max attempts'],
          [[s.pending, s.inFlight, s.retrying, s.published, s.dead, s.oldestPendingAgeMs, s.maxAttempts]],
        )}\n`,
      );
    } else if (action === 'dead') {
      const letters = await listDeadLetters(pool, {
        ...schemaOption,
        limit,
        ...(values.topic === undefined ? {} : { topic: values.topic }),
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
      await replayOrDiscard(pool, action, ids, values.topic, schemaOption, qualified);
    } else {
      const removed = await purgePublished(pool, { ...schemaOption, olderThanMs });
      process.stdout.write(`removed ${removed} published rows\n`);
    }
  } finally {
    await pool.end();
  }
}

function outboxAction(value: string | undefined): Action {
  if (value === undefined) throw new UsageError(`outbox: give an action: ${ACTIONS.join(', ')}`);
  if (!(ACTIONS as readonly string[]).includes(value)) {
    throw new UsageError(`outbox: unknown action "${value}"; actions: ${ACTIONS.join(', ')}`);
  }
  return value as Action;
}

/** The --id values (deduplicated), or undefined for --all; each must be an id the outbox can have. */
function selectedIds(
  action: 'replay' | 'discard',
  values: { id?: string[] | undefined; all?: boolean | undefined; topic?: string | undefined },
): string[] | undefined {
  const given = values.id ?? [];
  if (values.all && given.length > 0) throw new UsageError(`outbox ${action}: give --id or --all, not both`);
  if (values.all) return undefined;
  if (given.length === 0) throw new UsageError(`outbox ${action}: give --id ID (repeatable) or --all`);
  if (values.topic !== undefined) {
    throw new UsageError(`outbox ${action}: --topic goes with --all (an --id already names its message)`);
  }
  for (const id of given) {
    if (!/^\d{1,19}$/.test(id) || BigInt(id) < 1n || BigInt(id) > MAX_ID) {
      throw new UsageError(
        `outbox ${action}: --id takes the numeric id of a dead letter (oncely outbox dead lists them), got "${id}"`,
      );
    }
  }
  return [...new Set(given.map((id) => BigInt(id).toString()))];
}

async function replayOrDiscard(
  pool: Pool,
  action: 'replay' | 'discard',
  ids: string[] | undefined,
  topic: string | undefined,
  schemaOption: { schema?: string },
  qualified: string,
): Promise<void> {
  // Asked-for ids that are no dead letters (unknown, or replayed / discarded already) are found first, so the
  // answer can name them: silently acting on fewer rows than asked would read as success.
  let missing: string[] = [];
  if (ids !== undefined) {
    const { rows } = await pool.query<{ id: string }>(
      `SELECT id::text AS id FROM ${qualified} WHERE state = 2 AND id = ANY($1::bigint[])`,
      [ids],
    );
    const dead = new Set(rows.map((row) => row.id));
    missing = ids.filter((id) => !dead.has(id));
  }
  const selection =
    ids === undefined ? { all: true as const, ...(topic === undefined ? {} : { topic }) } : { ids };
  const count =
    action === 'replay'
      ? await replayDeadLetters(pool, selection, schemaOption)
      : await discardDeadLetters(pool, selection, schemaOption);
  process.stdout.write(`${action === 'replay' ? 'replayed' : 'discarded'} ${count} dead letters\n`);
  if (missing.length > 0) {
    throw new CommandFailed(
      `outbox ${action}: not dead letters (unknown ids, or replayed or discarded already): ${missing.join(', ')}; oncely outbox dead lists them`,
    );
  }
}
