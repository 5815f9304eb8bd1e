/**
 * @module The stored outcome of a key whose transaction escaped (transactional mode): the holder's code committed
 * its writes outside the claim, so the effect may have happened and can never be undone. The key must never run
 * again, so the claim stores this mark as the key's outcome, through the ordinary `Store.complete` (any store and
 * any store wrapper keep it like every outcome), and the engine answers it with `TransactionEscapedError` wherever
 * it is met.
 */
import { ESCAPED_MARK } from './clear-marks.js';
import type { HeaderPairs } from './store.js';

// A header no response of a handler can carry: HTTP field names are tokens, and ':' is not a token character, so
// a stored response can never be taken for the mark (the HTTP layer stores only the handler's own fields).
const [MARK_NAME, MARK_VALUE] = ESCAPED_MARK;

/** The mark as an outcome: status 0 (not an HTTP response), one header, no body. */
export const ESCAPED_OUTCOME = {
  status: 0,
  headers: [[MARK_NAME, MARK_VALUE]] as HeaderPairs,
  body: new Uint8Array(0),
} as const;

/** Whether a stored (or opened) outcome is the mark: the status and headers decide, never the body. */
export function isEscapedOutcome(outcome: {
  readonly status: number;
  readonly headers: HeaderPairs;
}): boolean {
  if (outcome.status !== 0 || outcome.headers.length !== 1) return false;
  const [name, value] = outcome.headers[0]!;
  return name === MARK_NAME && value === MARK_VALUE;
}
