/**
 * @module The client's options and per-call limits, their defaults, and their checks: a misspelled or malformed
 * option throws at `createClient`, and a call's limits override the client's where given.
 */
import { InvalidOptionsError } from '../core/errors.js';
import { knownOptions, optionalFunction, wholeNumber } from '../core/validate.js';
import type { BackoffPolicy } from './backoff.js';
import type { RetryReason } from './retry-policy.js';

/**
 * A `fetch` with the standard signature: the global one, undici's, a test double, a framework's in-process
 * `app.request` (Hono's may answer synchronously, hence the plain `Response`).
 */
export type FetchFunction = (input: string | URL, init: RequestInit) => Promise<Response> | Response;

/** What `onRetry` is told before each wait. */
export interface RetryEvent {
  /** The key every attempt of this call sends. */
  readonly key: string;
  /** The attempt that just failed, from 1. */
  readonly attempt: number;
  readonly reason: RetryReason;
  /** The answer's status, when there was an answer. */
  readonly status?: number;
  /** The network error, when there was no answer. */
  readonly error?: unknown;
  /** How long the client waits before the next attempt. */
  readonly delayMs: number;
}

/** The limits of one call: every one of them can be given per client and overridden per call. */
export interface RetryLimits {
  /** Attempts in all, the first included. Default 10. */
  readonly maxAttempts?: number;
  /** Overall deadline in ms, from the call until the final answer's headers, waits included. Default 30,000. */
  readonly timeoutMs?: number;
  /** One attempt's limit in ms; a silent connection is then retried instead of eating the deadline. Default 10,000. */
  readonly attemptTimeoutMs?: number;
}

export interface ClientOptions extends RetryLimits {
  /** Default: the global `fetch`, looked up at each call (so a polyfill or a test's stub installed later is used). */
  readonly fetch?: FetchFunction;
  /** Default `'Idempotency-Key'`. */
  readonly header?: string;
  /** Ceiling of the first retry's jitter window, ms; doubles per retry. Default 250. */
  readonly baseDelayMs?: number;
  /** The jitter window never grows past this, ms. Default 5,000. */
  readonly maxDelayMs?: number;
  /** A `Retry-After` longer than this waits this long, ms. Default 10,000. */
  readonly maxRetryAfterMs?: number;
  /** Largest stream body read into memory so that it can be sent again, bytes. Default 1,048,576. */
  readonly maxStreamBytes?: number;
  /** Told before each wait: for logs and metrics. */
  readonly onRetry?: (event: RetryEvent) => void;
}

/** The options after defaults, checked once. */
export interface ResolvedOptions extends BackoffPolicy, Required<RetryLimits> {
  readonly fetch: FetchFunction | undefined;
  readonly header: string;
  readonly maxStreamBytes: number;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
}

const CLIENT_OPTIONS = [
  'fetch',
  'header',
  'maxAttempts',
  'timeoutMs',
  'attemptTimeoutMs',
  'baseDelayMs',
  'maxDelayMs',
  'maxRetryAfterMs',
  'maxStreamBytes',
  'onRetry',
] as const satisfies readonly (keyof ClientOptions)[];

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// setTimeout holds a signed 32-bit delay: a longer one fires at once.
const MAX_TIMER_MS = 2_147_483_647;

/** Checks the client's options once, at `createClient`: a misspelled or malformed option throws there. */
export function resolveOptions(options: ClientOptions): ResolvedOptions {
  knownOptions('createClient', options, CLIENT_OPTIONS);
  optionalFunction('fetch', options.fetch);
  optionalFunction('onRetry', options.onRetry);
  const header = options.header ?? 'Idempotency-Key';
  if (typeof header !== 'string' || !HEADER_NAME.test(header)) {
    throw new InvalidOptionsError(`header must be an HTTP header name, got ${String(header)}`);
  }
  const resolved: ResolvedOptions = {
    fetch: options.fetch,
    header,
    ...resolveLimits(options, { maxAttempts: 10, timeoutMs: 30_000, attemptTimeoutMs: 10_000 }),
    baseDelayMs: wholeNumber('baseDelayMs', options.baseDelayMs, 250, { max: MAX_TIMER_MS }),
    maxDelayMs: wholeNumber('maxDelayMs', options.maxDelayMs, 5_000, { max: MAX_TIMER_MS }),
    maxRetryAfterMs: wholeNumber('maxRetryAfterMs', options.maxRetryAfterMs, 10_000, { max: MAX_TIMER_MS }),
    maxStreamBytes: wholeNumber('maxStreamBytes', options.maxStreamBytes, 1_048_576),
    onRetry: options.onRetry,
  };
  return resolved;
}

/** A call's limits over the client's: the per-call value wins where given. */
export function resolveLimits(limits: RetryLimits, defaults: Required<RetryLimits>): Required<RetryLimits> {
  return {
    maxAttempts: wholeNumber('maxAttempts', limits.maxAttempts, defaults.maxAttempts, { min: 1 }),
    timeoutMs: wholeNumber('timeoutMs', limits.timeoutMs, defaults.timeoutMs, { min: 1, max: MAX_TIMER_MS }),
    attemptTimeoutMs: wholeNumber('attemptTimeoutMs', limits.attemptTimeoutMs, defaults.attemptTimeoutMs, {
      min: 1,
      max: MAX_TIMER_MS,
    }),
  };
}
