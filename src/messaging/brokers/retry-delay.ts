/**
 * @module When a message the inbox did not settle comes back, for every broker consumer alike: after the other
 * holder's lease for `busy`, after an exponential delay per attempt for `failed`.
 */
import type { InboxOutcome } from '../consumer.js';

/**
 * How long a broker helper waits before a message that was not acknowledged comes back: the other consumer's
 * remaining lease for `busy`, an exponential delay per attempt for `failed` (a handler error, a store outage),
 * never more than `maxMs`.
 */
export function retryDelayMs(outcome: InboxOutcome<unknown>, maxMs: number): number {
  if (outcome.kind === 'busy') return Math.max(1, Math.min(outcome.retryAfterMs, maxMs));
  const attempt = outcome.kind === 'failed' ? (outcome.attempt ?? 1) : 1;
  return Math.min(maxMs, 100 * 2 ** Math.min(attempt - 1, 30));
}
