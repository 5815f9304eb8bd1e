/**
 * @module How long the client waits between attempts: exponential backoff with full jitter, with a server's
 * `Retry-After` taken as a floor (capped), so clients that failed together come back spread out.
 */
/** The waiting side of the retry policy, in milliseconds. */
export interface BackoffPolicy {
  /** Ceiling of the first retry's jitter window; it doubles with each retry. */
  readonly baseDelayMs: number;
  /** The window never grows past this. */
  readonly maxDelayMs: number;
  /** A server's `Retry-After` is honoured up to this; a longer one waits this long. */
  readonly maxRetryAfterMs: number;
}

/**
 * Exponential backoff with full jitter (a uniformly random wait in [0, min(max, base × 2^(retry−1)))): clients that
 * failed together, as after a store outage, come back spread out instead of in waves.
 * `retry` counts from 1 (the wait before the second attempt); `random` returns [0, 1), as Math.random does.
 */
export function fullJitterMs(
  retry: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const window = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * window);
}

/**
 * The wait before retry number `retry`. A server's `Retry-After` is a floor (RFC 9110: how long the client ought
 * to wait), capped at `maxRetryAfterMs` so that one far-off date cannot park the caller; the jittered backoff may
 * wait longer, so a server that keeps saying "1 second" through a long outage still sees its clients back off and
 * spread out.
 */
export function retryDelayMs(
  retry: number,
  retryAfterMs: number | undefined,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const jitter = fullJitterMs(retry, policy, random);
  if (retryAfterMs === undefined) return jitter;
  return Math.max(Math.min(retryAfterMs, policy.maxRetryAfterMs), jitter);
}
