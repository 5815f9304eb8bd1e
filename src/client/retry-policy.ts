/**
 * @module Which answers the client sends again under the same key and which are final, each row with its reason: the
 * retry decision in one place.
 */
/** An answer, as far as the retry decision cares. */
export interface Answer {
  readonly status: number;
  /** `Idempotent-Replayed: true`: the server stored this answer, so every retry would get it again. */
  readonly replayed: boolean;
}

/** Why an attempt is retried; reported to `onRetry`. */
export type RetryReason =
  | 'network-error'
  | 'attempt-timeout'
  | 'in-progress'
  | 'rate-limited'
  | 'unavailable'
  | 'server-error';

export type RetryDecision =
  | { readonly retry: false }
  | { readonly retry: true; readonly reason: Exclude<RetryReason, 'network-error' | 'attempt-timeout'> };

const FINAL: RetryDecision = { retry: false };

/**
 * Whether an answer is final or worth sending again under the same key. The key is what makes every
 * retry here safe: the server runs the operation at most once and answers a retry with the stored result.
 *
 * | outcome | retried | why |
 * | --- | --- | --- |
 * | network error, attempt timeout (no answer: the client's loop) | yes | the request may or may not have run; the retry finds out (a replay, or the first run) |
 * | 409 | yes | the same key is in flight (`request-in-progress`); the retry gets its answer once stored |
 * | 429, 503 | yes | the server asks to come back later (`store-unavailable` and `lease-lost` are 503) |
 * | other 5xx, not replayed | yes | oncely releases the key after a 5xx, so the retry runs the operation again |
 * | 501, 505 | no | the server cannot do this request at all; asking again changes nothing |
 * | any answer with `Idempotent-Replayed: true` | no | it is stored: every retry gets it byte for byte |
 * | 400, 422, any other 4xx, 1xx–3xx | no | the request itself is the problem (or the answer is the result) |
 */
export function retryDecision({ status, replayed }: Answer): RetryDecision {
  if (replayed) return FINAL;
  if (status === 409) return { retry: true, reason: 'in-progress' };
  if (status === 429) return { retry: true, reason: 'rate-limited' };
  if (status === 503) return { retry: true, reason: 'unavailable' };
  if (status >= 500 && status <= 599 && status !== 501 && status !== 505) {
    return { retry: true, reason: 'server-error' };
  }
  return FINAL;
}
