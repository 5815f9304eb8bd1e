/**
 * @module The outbox's dead letters: the messages the relay gave up on after `maxAttempts`, listed a page at a time,
 * replayed into the outbox or discarded.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions, wholeNumber } from '../../core/validate.js';
import { outboxStatements } from './sql.js';
import { outboxTable, type Queryable, type SchemaOptions } from './table.js';

/** A message the relay gave up on after `maxAttempts`, kept with its last error until replayed or discarded. */
export interface DeadLetter {
  readonly id: string;
  readonly topic: string;
  readonly key: string | null;
  readonly payload: Buffer;
  readonly contentType: string;
  readonly headers: Record<string, string>;
  readonly attempts: number;
  readonly createdAt: Date;
  readonly deadAt: Date;
  readonly lastError: string | null;
}

export interface ListDeadLettersOptions extends SchemaOptions {
  /** Only this topic. */
  readonly topic?: string;
  /** Ids greater than this (the last id of the previous page). */
  readonly after?: string;
  /** Page size. Default 100. */
  readonly limit?: number;
}

/** Dead letters in id order, one page at a time. */
export async function listDeadLetters(
  db: Queryable,
  options: ListDeadLettersOptions = {},
): Promise<DeadLetter[]> {
  knownOptions('listDeadLetters', options, ['schema', 'topic', 'after', 'limit']);
  const sql = outboxStatements(outboxTable(options.schema));
  const limit = wholeNumber('limit', options.limit, 100, { min: 1, max: 10_000 });
  const after = checkId('after', options.after ?? '0');
  const { rows } = await db.query<{
    id: string;
    topic: string;
    key: string | null;
    payload: Buffer;
    content_type: string;
    headers: Record<string, string>;
    attempts: number;
    created_at: Date;
    dead_at: Date;
    last_error: string | null;
  }>(sql.listDeadLetters, [after, options.topic ?? null, limit]);
  return rows.map((row) => ({
    id: row.id,
    topic: row.topic,
    key: row.key,
    payload: row.payload,
    contentType: row.content_type,
    headers: row.headers,
    attempts: row.attempts,
    createdAt: row.created_at,
    deadAt: row.dead_at,
    lastError: row.last_error,
  }));
}

/** Which dead letters to act on: some ids, or all of them (optionally one topic's). */
export type DeadLetterSelection =
  | { readonly ids: readonly string[] }
  | { readonly all: true; readonly topic?: string };

/**
 * Puts dead letters back in line with a fresh attempt count. Each gets a new transaction id, so it queues
 * behind its key's pending messages (it does not overtake one in flight); relays are woken by a NOTIFY.
 * Resolves with the number of rows replayed.
 */
export async function replayDeadLetters(
  db: Queryable,
  selection: DeadLetterSelection,
  options: SchemaOptions = {},
): Promise<number> {
  const sql = outboxStatements(outboxTable(options.schema));
  const result = await db.query<{ count: number }>(sql.replayDeadLetters, selectionFilter(selection));
  return Number(result.rows[0]?.count ?? 0);
}

/** Deletes dead letters for good. Resolves with the number of rows removed. */
export async function discardDeadLetters(
  db: Queryable,
  selection: DeadLetterSelection,
  options: SchemaOptions = {},
): Promise<number> {
  const sql = outboxStatements(outboxTable(options.schema));
  const result = await db.query(sql.discardDeadLetters, selectionFilter(selection));
  return result.rowCount ?? 0;
}

/** The two parameters both selecting statements take: $1 ids (NULL: all), $2 topic (NULL: any). */
function selectionFilter(selection: DeadLetterSelection): [string[] | null, string | null] {
  if (selection === null || typeof selection !== 'object') {
    throw new InvalidOptionsError('pass { ids: [...] } or { all: true } to select dead letters');
  }
  if ('ids' in selection) {
    if (!Array.isArray(selection.ids)) throw new InvalidOptionsError('ids must be an array of outbox ids');
    return [selection.ids.map((id) => checkId('ids', id)), null];
  }
  if (selection.all !== true)
    throw new InvalidOptionsError('pass { ids: [...] } or { all: true } to select dead letters');
  if (selection.topic !== undefined && typeof selection.topic !== 'string')
    throw new InvalidOptionsError('topic must be a string');
  return [null, selection.topic ?? null];
}

function checkId(name: string, id: unknown): string {
  if (typeof id !== 'string' || !/^\d{1,19}$/.test(id))
    throw new InvalidOptionsError(`${name}: outbox ids are digit strings`);
  return id;
}
