/**
 * @module The dashboard's write actions (replay or discard dead letters, release or delete a key): each body checked
 * before anything runs, then carried out through the library's own primitives, the store's fenced `release` and
 * `delete` included.
 */
import { discardDeadLetters, replayDeadLetters } from '../messaging/outbox/dead-letters.js';
import type { ActionResult } from './model.js';
import type { ResolvedDashboard } from './options.js';

export const ACTION_NAMES = ['replay', 'discard', 'release', 'delete'] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

const OUTBOX_ID = /^\d{1,19}$/;
const STORAGE_KEY = /^[A-Za-z0-9_-]{43}$/;
const MAX_IDS = 1_000;

export type ActionInput = { readonly ids: readonly string[] } | { readonly key: string };

/** The JSON body of an action, checked before anything runs: ids for dead letters, a storage key for keys. */
export function actionInput(name: ActionName, body: unknown): ActionInput | { error: string } {
  if (body === null || typeof body !== 'object') return { error: 'the body must be a JSON object' };
  if (name === 'replay' || name === 'discard') {
    const ids = (body as { ids?: unknown }).ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_IDS)
      return { error: `ids must be an array of 1 to ${MAX_IDS} outbox ids` };
    if (!ids.every((id) => typeof id === 'string' && OUTBOX_ID.test(id)))
      return { error: 'outbox ids are digit strings' };
    return { ids: ids as string[] };
  }
  const key = (body as { key?: unknown }).key;
  if (typeof key !== 'string' || !STORAGE_KEY.test(key))
    return { error: 'key must be a storage key (43 base64url characters)' };
  return { key };
}

/**
 * Runs one action through the same primitives the library uses: the outbox's replay and discard, and the store's
 * fenced `release` and `delete`. Releasing reads the key's current token first and releases with it, so a key
 * that a new claim took meanwhile is not released from under it (the store answers `fenced`).
 */
export async function runAction(
  options: ResolvedDashboard,
  name: ActionName,
  input: ActionInput,
): Promise<ActionResult & { status: number }> {
  if ('ids' in input) {
    const { outbox } = options;
    if (outbox === undefined) return { status: 404, ok: false, message: 'no outbox is configured' };
    const selection = { ids: input.ids };
    const count =
      name === 'replay'
        ? await replayDeadLetters(outbox.pool, selection, { schema: outbox.schema })
        : await discardDeadLetters(outbox.pool, selection, { schema: outbox.schema });
    const done = name === 'replay' ? 'replayed' : 'discarded';
    const missing = input.ids.length - count;
    return {
      status: 200,
      ok: missing === 0,
      count,
      message: `${done} ${count} dead letter${count === 1 ? '' : 's'}${missing > 0 ? `; ${missing} were no dead letters (already replayed or discarded?)` : ''}`,
    };
  }
  const { store, inspector } = options.source;
  if (name === 'delete') {
    const deleted = await store.delete(input.key);
    return {
      status: deleted ? 200 : 404,
      ok: deleted,
      count: deleted ? 1 : 0,
      message: deleted ? 'deleted: the next request with this key runs again' : 'no record for this key',
    };
  }
  const record = await inspector.record(input.key);
  if (record === undefined) return { status: 404, ok: false, count: 0, message: 'no record for this key' };
  if (record.state !== 'inProgress')
    return { status: 409, ok: false, count: 0, message: `the key is ${record.state}, not in progress` };
  const released = await store.release({ key: input.key, token: record.token });
  if (released.kind === 'fenced')
    return {
      status: 409,
      ok: false,
      count: 0,
      message: 'a newer claim took the key meanwhile; nothing released',
    };
  return {
    status: 200,
    ok: true,
    count: 1,
    message: `released (token ${record.token}): the next request runs again; the old owner, if alive, is fenced`,
  };
}
