/**
 * @module `createClient(options).fetch(url, init)`: the client's loop, one key for all attempts of an operation,
 * each answer judged final or retried under the retry policy, within the call's deadline and attempt limits.
 */
import { InvalidOptionsError } from '../core/errors.js';
import { type Attempt, runAttempt } from './attempt.js';
import { retryDelayMs } from './backoff.js';
import { replayableBody } from './body.js';
import { DeadlineExceededError, RetriesExhaustedError } from './errors.js';
import { checkKey, keyHeaderValue, newKey } from './key.js';
import { keyRejection } from './key-rejection.js';
import {
  type ClientOptions,
  type ResolvedOptions,
  type RetryLimits,
  resolveLimits,
  resolveOptions,
} from './options.js';
import { parseRetryAfter } from './retry-after.js';
import { type RetryReason, retryDecision } from './retry-policy.js';
import { attemptSignal, sleep } from './signals.js';

/** fetch's `init`, plus this call's key and limits. */
export interface IdempotentRequestInit extends RequestInit, RetryLimits {
  /**
   * The operation's idempotency key. Default: a new UUIDv7 for this call, reused by each of its attempts. Pass your
   * own (kept with the order, say) to carry one operation across calls, restarts or processes.
   */
  readonly key?: string;
}

/** The final answer to one operation. */
export interface IdempotentResult {
  /** The answer, body unread (fetch's `Response`): the operation's result, a replay of it, or a final refusal. */
  readonly response: Response;
  /** The server said `Idempotent-Replayed: true`: an earlier attempt (or an earlier call with this key) did the work. */
  readonly replayed: boolean;
  /** HTTP requests sent for this result, from 1. */
  readonly attempts: number;
  /** The key every attempt sent. */
  readonly key: string;
}

export interface IdempotentClient {
  /**
   * Sends one operation: the same key and the same body bytes on every attempt, retried as the retry table says,
   * within the deadline. Resolves with the final answer; rejects with the caller's abort reason,
   * `RetriesExhaustedError`, `DeadlineExceededError`, `KeyRejectedError` or `BodyNotReplayableError`.
   */
  fetch(input: string | URL, init?: IdempotentRequestInit): Promise<IdempotentResult>;
}

/**
 * The client side of the Idempotency-Key protocol: `createClient(options).fetch(url, init)`.
 *
 * @example
 * const client = createClient({ timeoutMs: 20_000 });
 * const { response, replayed, attempts } = await client.fetch('https://api.example.com/payments', {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json' },
 *   body: JSON.stringify({ amount: 1999, currency: 'EUR' }),
 * });
 */
export function createClient(options: ClientOptions = {}): IdempotentClient {
  const resolved = resolveOptions(options);
  return { fetch: (input, init = {}) => send(resolved, input, init) };
}

async function send(
  options: ResolvedOptions,
  input: string | URL,
  init: IdempotentRequestInit,
): Promise<IdempotentResult> {
  const started = performance.now();
  // The call's own fields are not fetch's: they stay out of the init every attempt passes on.
  const { key: ownKey, maxAttempts: _a, timeoutMs: _t, attemptTimeoutMs: _at, ...fetchInit } = init;
  const limits = resolveLimits(init, options);
  const caller = fetchInit.signal ?? undefined;
  caller?.throwIfAborted();
  if (typeof input !== 'string' && !(input instanceof URL)) {
    // A Request's body is a stream that can be read once; its parts are what a retry needs.
    throw new InvalidOptionsError(
      'client.fetch takes a URL and an init (method, headers, body), not a Request',
    );
  }
  const headers = new Headers(fetchInit.headers);
  const key = chooseKey(ownKey, headers, options.header);
  const body = await replayableBody(fetchInit.body, options.maxStreamBytes);
  if (body.contentType !== null && !headers.has('content-type'))
    headers.set('content-type', body.contentType);
  // fetch reports a request it cannot make (a bad URL, a body on a GET, a bad header value) as a TypeError, the
  // same type as a network error: building the request once here throws it before the first attempt, instead of
  // retrying a programming error until the attempts run out.
  new Request(input, { ...fetchInit, headers, body: body.bytes });
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const deadline = started + limits.timeoutMs;

  for (let attempt = 1; ; attempt++) {
    if (attempt > 1 && performance.now() >= deadline) {
      // A wait's timer can fire late (a busy event loop): no attempt starts after the deadline, however fast it
      // would be answered.
      throw new DeadlineExceededError(key, attempt - 1, limits.timeoutMs, undefined);
    }
    const signal = attemptSignal(caller, deadline - performance.now(), limits.attemptTimeoutMs);
    const init = { ...fetchInit, headers: new Headers(headers), body: body.bytes, signal: signal.signal };
    const verdict = judge(await runAttempt(fetchImpl, input, init, signal));
    if (verdict.kind === 'final') {
      // The caller's signal keeps covering the body, which the caller reads after this returns (as with fetch).
      signal.settle(true);
      const rejected = await keyRejection(verdict.response, key);
      if (rejected === undefined) {
        return { response: verdict.response, replayed: verdict.replayed, attempts: attempt, key };
      }
      await discard(verdict.response);
      throw rejected;
    }
    signal.settle(false);
    if (verdict.kind === 'stopped') {
      if (verdict.cause === 'caller') throw caller?.reason ?? verdict.reason;
      throw new DeadlineExceededError(key, attempt, limits.timeoutMs, undefined, { cause: verdict.reason });
    }
    const { response, error } = verdict;
    if (attempt >= limits.maxAttempts) {
      throw new RetriesExhaustedError(key, attempt, response, { cause: error });
    }
    const delayMs = retryDelayMs(attempt, parseRetryAfter(response?.headers.get('retry-after')), options);
    if (performance.now() + delayMs >= deadline) {
      // Waiting only to fail at the deadline would tell the caller nothing new, later.
      throw new DeadlineExceededError(key, attempt, limits.timeoutMs, response, { cause: error });
    }
    if (response !== undefined) await discard(response);
    const seen = response === undefined ? { error } : { status: response.status };
    report(options, { key, attempt, reason: verdict.reason, delayMs, ...seen });
    await sleep(delayMs, caller);
  }
}

/** What the loop does with an attempt: return its answer, give up, or send it again after a wait. */
type Verdict =
  | { readonly kind: 'final'; readonly response: Response; readonly replayed: boolean }
  | { readonly kind: 'stopped'; readonly cause: 'caller' | 'deadline'; readonly reason: unknown }
  | {
      readonly kind: 'retry';
      readonly reason: RetryReason;
      readonly response?: Response;
      readonly error?: unknown;
    };

function judge(attempt: Attempt): Verdict {
  switch (attempt.kind) {
    case 'answer': {
      const { response } = attempt;
      const replayed = response.headers.get('idempotent-replayed')?.trim().toLowerCase() === 'true';
      const decision = retryDecision({ status: response.status, replayed });
      return decision.retry
        ? { kind: 'retry', reason: decision.reason, response }
        : { kind: 'final', response, replayed };
    }
    case 'failed':
      // No answer: the request may or may not have run. The retry finds out, under the same key.
      return { kind: 'retry', reason: 'network-error', error: attempt.error };
    case 'aborted':
      return attempt.cause === 'attempt-timeout'
        ? { kind: 'retry', reason: 'attempt-timeout', error: attempt.reason }
        : { kind: 'stopped', cause: attempt.cause, reason: attempt.reason };
  }
}

/**
 * The key of this call: the `key` option, else an `Idempotency-Key` the caller put in the headers (sent as they
 * wrote it), else a new UUIDv7. Both at once is refused unless they agree: which one the server sees must not be a
 * guess.
 */
function chooseKey(ownKey: string | undefined, headers: Headers, header: string): string {
  const fromHeader = headers.get(header);
  if (ownKey === undefined) {
    if (fromHeader !== null) return fromHeader;
    const key = newKey();
    headers.set(header, key);
    return key;
  }
  const value = keyHeaderValue(checkKey(ownKey));
  if (fromHeader !== null && fromHeader !== value) {
    throw new InvalidOptionsError(`the key option and the ${header} header disagree; set the key once`);
  }
  headers.set(header, value);
  return ownKey;
}

/** A response that will not be read: its body is cancelled so the connection is freed for the retry. */
async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Already closed or errored: nothing to free.
  }
}

function report(
  options: ResolvedOptions,
  event: Parameters<NonNullable<ResolvedOptions['onRetry']>>[0],
): void {
  try {
    options.onRetry?.(event);
  } catch {
    // A hook that throws is a bug in the hook, not a reason to fail the operation (as with the engine's onEvent).
  }
}
