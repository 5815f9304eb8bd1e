/**
 * @module The marks oncely itself stores as a key's outcome, which encryption at rest leaves in clear: a parked
 * inbox message and an escaped transaction. A mark is status 0, no body and exactly one header of these; it holds
 * nothing of the user's, and tools find it by its header (the dashboard's parked panel), which a sealed record
 * would hide. A mark forged in the store could only refuse a key or park a message, which anyone who can write
 * to the store can do by deleting records anyway.
 */
import type { StoredOutcome } from './store.js';

/** The inbox's parked mark: `oncely-inbox: parked`. */
export const PARKED_MARK = ['oncely-inbox', 'parked'] as const;
/** The escaped-transaction mark: a name no HTTP response can carry (':' is not a token character). */
export const ESCAPED_MARK = [':oncely', 'transaction-escaped'] as const;

/** Whether `outcome` is exactly one of oncely's own marks (status 0, no body, the one header). */
export function isClearMark(outcome: StoredOutcome): boolean {
  if (outcome.status !== 0 || outcome.body.byteLength !== 0 || outcome.headers.length !== 1) return false;
  const [name, value] = outcome.headers[0]!;
  return (
    (name === PARKED_MARK[0] && value === PARKED_MARK[1]) ||
    (name === ESCAPED_MARK[0] && value === ESCAPED_MARK[1])
  );
}
