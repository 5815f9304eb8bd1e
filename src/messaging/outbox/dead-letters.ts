/**
 * @module The outbox's dead letters: the messages the relay gave up on after `maxAttempts`, listed a page at a time,
 * replayed into the outbox or discarded.
 */
// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions, wholeNumber } from '../../core/validate.js';
import type { DeadLetter } from './backend.js';
import { backendOf, type OutboxDatabase } from './dialect.js';
import type { SchemaOptions } from './table.js';

export type { DeadLetter } from './backend.js';

export interface ListDeadLettersOptions extends SchemaOptions {
  /** Only this topic. */
  readonly topic?: string;
  /** Ids greater than this (the last id of the previous page). */
  readonly after?: string;
  /** Page size. Default 100. */
  readonly limit?: number;
}

/** Dead letters in id order, one page at a time, from a `pg` pool or client or a MySQL pool. */
export async function listDeadLetters(
  db: OutboxDatabase,
  options: ListDeadLettersOptions = {},
): Promise<DeadLetter[]> {
  knownOptions('listDeadLetters', options, ['schema', 'topic', 'after', 'limit']);
  const limit = wholeNumber('limit', options.limit, 100, { min: 1, max: 10_000 });
  const after = checkId('after', options.after ?? '0');
  if (options.topic !== undefined && typeof options.topic !== 'string')
    throw new InvalidOptionsError('topic must be a string');
  return backendOf(db, options.schema).listDeadLetters(after, options.topic ?? null, limit);
}

/** Which dead letters to act on: some ids, or all of them (optionally one topic's). */
export type DeadLetterSelection =
  | { readonly ids: readonly string[] }
  | { readonly all: true; readonly topic?: string };

/**
 * Puts dead letters back in line with a fresh attempt count. Each gets a new place in its key's order, taken under
 * the key's lock as a writer's, so it queues behind its key's pending messages (it does not overtake one in flight).
 * On PostgreSQL relays are woken by a NOTIFY; on MySQL they find the rows at their next poll. Resolves with the
 * number of rows replayed.
 */
export async function replayDeadLetters(
  db: OutboxDatabase,
  selection: DeadLetterSelection,
  options: SchemaOptions = {},
): Promise<number> {
  const filter = selectionFilter(selection);
  return backendOf(db, options.schema).replayDeadLetters(filter);
}

/** Deletes dead letters for good. Resolves with the number of rows removed. */
export async function discardDeadLetters(
  db: OutboxDatabase,
  selection: DeadLetterSelection,
  options: SchemaOptions = {},
): Promise<number> {
  const filter = selectionFilter(selection);
  return backendOf(db, options.schema).discardDeadLetters(filter);
}

/** Both selecting operations' filter: ids (null: all) and topic (null: any). */
function selectionFilter(selection: DeadLetterSelection): { ids: string[] | null; topic: string | null } {
  if (selection === null || typeof selection !== 'object') {
    throw new InvalidOptionsError('pass { ids: [...] } or { all: true } to select dead letters');
  }
  if ('ids' in selection) {
    if (!Array.isArray(selection.ids)) throw new InvalidOptionsError('ids must be an array of outbox ids');
    return { ids: selection.ids.map((id) => checkId('ids', id)), topic: null };
  }
  if (selection.all !== true)
    throw new InvalidOptionsError('pass { ids: [...] } or { all: true } to select dead letters');
  if (selection.topic !== undefined && typeof selection.topic !== 'string')
    throw new InvalidOptionsError('topic must be a string');
  return { ids: null, topic: selection.topic ?? null };
}

function checkId(name: string, id: unknown): string {
  if (typeof id !== 'string' || !/^\d{1,19}$/.test(id))
    throw new InvalidOptionsError(`${name}: outbox ids are digit strings`);
  return id;
}
