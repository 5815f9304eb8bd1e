/**
 * @module The relay's retry timing: per-message delays (exponential with equal jitter) and the retry horizon, the
 * longest span between a message's first and last publish, against which a broker's deduplication window is checked.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import { knownOptions, wholeNumber } from '../../core/validate.js';

/** Retry delays: exponential from `initialMs`, doubling per attempt, capped at `maxMs`, with jitter. */
export interface BackoffOptions {
  /** Delay ceiling after the first failed attempt. Default 100 ms. */
  readonly initialMs?: number;
  /** Largest delay ceiling. Default 10,000 ms. */
  readonly maxMs?: number;
}

export interface Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
}

export function resolveBackoff(options: BackoffOptions | undefined): Backoff {
  if (options === undefined) return { initialMs: 100, maxMs: 10_000 };
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('backoff must be an object');
  knownOptions('backoff', options, ['initialMs', 'maxMs']);
  const initialMs = wholeNumber('backoff.initialMs', options.initialMs, 100, { min: 1 });
  const maxMs = wholeNumber('backoff.maxMs', options.maxMs, Math.max(10_000, initialMs), { min: initialMs });
  return { initialMs, maxMs };
}

/** The delay ceiling after `attempt` failed attempts (attempt ≥ 1). */
export function backoffCeilingMs(attempt: number, { initialMs, maxMs }: Backoff): number {
  // 2 ** 52 is past any cap; clamping the exponent keeps the arithmetic finite for absurd attempt counts.
  return Math.min(maxMs, initialMs * 2 ** Math.min(Math.max(attempt - 1, 0), 52));
}

/**
 * "Equal jitter": half the ceiling for sure plus a random half. Retries of many rows that failed together (a
 * broker outage) spread out instead of arriving in one wave, and no retry comes sooner than half the ceiling.
 */
export function backoffDelayMs(
  attempt: number,
  backoff: Backoff,
  random: () => number = Math.random,
): number {
  const ceiling = backoffCeilingMs(attempt, backoff);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * Longest time between the first and the last publish of one message: every retry delay up to the attempt
 * limit, a publish timeout per failed attempt, and one lease for a relay that crashed mid-batch. A broker's
 * deduplication window shorter than this can let a late retry through as a duplicate.
 */
export function retryHorizonMs(
  maxAttempts: number,
  backoff: Backoff,
  publishTimeoutMs: number,
  leaseMs: number,
): number {
  let total = leaseMs;
  for (let attempt = 1; attempt < maxAttempts; attempt++)
    total += backoffCeilingMs(attempt, backoff) + publishTimeoutMs;
  return total;
}
