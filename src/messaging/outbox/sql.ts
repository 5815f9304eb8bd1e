/**
 * @module The PostgreSQL outbox's SQL: the statements of ./sql (embedded at build time) rendered for one schema and
 * table, for the relay and the writer (MySQL's are in ./mysql/statements.ts, from ./sql/mysql).
 */
// This file's declarations use Node's types (Buffer): the directive, kept in its .d.ts, loads @types/node for
// users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import claimSql from './sql/claim.sql.generated.js';
import claimTopicsSql from './sql/claim-topics.sql.generated.js';
import deletePublishedSql from './sql/delete-published.sql.generated.js';
import discardDeadLettersSql from './sql/discard-dead-letters.sql.generated.js';
import failSql from './sql/fail.sql.generated.js';
import giveBackSql from './sql/give-back.sql.generated.js';
import insertManySql from './sql/insert-many.sql.generated.js';
import insertOneSql from './sql/insert-one.sql.generated.js';
import listDeadLettersSql from './sql/list-dead-letters.sql.generated.js';
import markPublishedSql from './sql/mark-published.sql.generated.js';
import migrateSql from './sql/migrate.sql.generated.js';
import purgePublishedSql from './sql/purge-published.sql.generated.js';
import replayDeadLettersSql from './sql/replay-dead-letters.sql.generated.js';
import statsSql from './sql/stats.sql.generated.js';
import { NOTIFY_CHANNEL, type OutboxTable } from './table.js';

export type { ClaimedRow } from './backend.js';

/** Every outbox statement of one table, rendered. Parameters and results: the header of each file in ./sql. */
export interface OutboxStatements {
  readonly claim: string;
  /** The claim of a relay limited to topics (its `topics` option). */
  readonly claimTopics: string;
  readonly markPublished: string;
  readonly deletePublished: string;
  readonly fail: string;
  readonly giveBack: string;
  readonly purgePublished: string;
  readonly listDeadLetters: string;
  readonly replayDeadLetters: string;
  readonly discardDeadLetters: string;
  readonly stats: string;
}

/** The writer's two statements, with or without the NOTIFY. */
export interface WriterStatements {
  readonly insertOne: string;
  readonly insertMany: string;
}

// Rendered once per table and kept: the maintenance functions take a schema per call.
const rendered = new Map<string, OutboxStatements>();

export function outboxStatements(table: OutboxTable): OutboxStatements {
  let statements = rendered.get(table.name);
  if (statements === undefined) {
    const sql = (template: string) => render(template, table, true);
    statements = {
      claim: sql(claimSql),
      claimTopics: sql(claimTopicsSql),
      markPublished: sql(markPublishedSql),
      deletePublished: sql(deletePublishedSql),
      fail: sql(failSql),
      giveBack: sql(giveBackSql),
      purgePublished: sql(purgePublishedSql),
      listDeadLetters: sql(listDeadLettersSql),
      replayDeadLetters: sql(replayDeadLettersSql),
      discardDeadLetters: sql(discardDeadLettersSql),
      stats: sql(statsSql),
    };
    rendered.set(table.name, statements);
  }
  return statements;
}

export function writerStatements(table: OutboxTable, notify: boolean): WriterStatements {
  return { insertOne: render(insertOneSql, table, notify), insertMany: render(insertManySql, table, notify) };
}

/** The migration script of one schema (several statements: send it without parameters). */
export function migrationScript(table: OutboxTable): string {
  return render(migrateSql, table, false);
}

// As text: pg_notify returns void, a column type Prisma's raw query refuses to read (an event added through it).
const notifyColumn = (tableLiteral: string) =>
  `, pg_notify('${NOTIFY_CHANNEL}', ${tableLiteral})::text AS notified`;

/**
 * Fills the placeholders and drops comment lines (they cost bytes on every call and never reach the planner).
 * The same rendering as the PostgreSQL store's `statementsFor` (src/stores/postgres/sql.ts), which keeps its
 * renderer private to its own statement set, hence this copy. Names come from `outboxTable`, which admits plain
 * identifiers only, so quoting them needs no escaping.
 */
function render(template: string, table: OutboxTable, notify: boolean): string {
  const literal = `'${table.name}'`;
  return template
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .replaceAll('{{table}}', table.name)
    .replaceAll('{{table_literal}}', literal)
    .replaceAll('{{sequence_literal}}', `'"${table.schema}".oncely_outbox_seq'`)
    .replaceAll('{{schema}}', `"${table.schema}"`)
    .replaceAll('{{notify}}', notify ? notifyColumn(literal) : '')
    .trim();
}
