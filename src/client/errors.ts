/**
 * @module The client's errors, in the library's shape: an `OncelyError` with a stable `code`, a literal `name`,
 * `cause`, and an `isX()` guard that matches on `name` (so it works across duplicated copies of the package). Each
 * one that gives up on a request carries its `key`: the outcome is not known to the caller yet, and a later call
 * with the same key gets the server's answer (a replay) instead of doing the work twice.
 */
import { OncelyError } from '../core/errors.js';

/** An RFC 9457 problem object as the server sent it (extension members included). */
export interface ProblemDetails {
  readonly type?: string;
  readonly title?: string;
  readonly status?: number;
  readonly detail?: string;
  readonly [member: string]: unknown;
}

/** Every attempt got an answer worth retrying (network error, 409, 429, a released 5xx), and none was left. */
export class RetriesExhaustedError extends OncelyError {
  override name = 'RetriesExhaustedError' as const;
  constructor(
    readonly key: string,
    readonly attempts: number,
    /** The last answer, body unread; undefined when the last attempt got no answer (network error, timeout). */
    readonly response: Response | undefined,
    options: { cause?: unknown } = {},
  ) {
    super(
      'ONCELY_RETRIES_EXHAUSTED',
      `no final answer after ${attempts} attempt(s) (last: ${lastSeen(response, options.cause)}); retry later with the same key`,
      options,
    );
  }
}

/**
 * The overall deadline (`timeoutMs`) passed during an attempt, or the next wait would have ended after it. Thrown
 * without waiting in the second case: sleeping until a deadline only to fail then tells the caller nothing new.
 */
export class DeadlineExceededError extends OncelyError {
  override name = 'DeadlineExceededError' as const;
  constructor(
    readonly key: string,
    readonly attempts: number,
    readonly timeoutMs: number,
    /** The last answer when there was one (a 409 or 503 whose wait would pass the deadline), body unread. */
    readonly response: Response | undefined,
    options: { cause?: unknown } = {},
  ) {
    super(
      'ONCELY_DEADLINE_EXCEEDED',
      `no final answer within ${timeoutMs} ms after ${attempts} attempt(s) (last: ${lastSeen(response, options.cause)}); retry later with the same key`,
      options,
    );
  }
}

/** Why the server refused the key, by the problem type it answered with (docs/errors.md). */
export type KeyRejection = 'reused' | 'missing' | 'malformed';

/**
 * The idempotency layer refused the key itself, so the answer is not the application's: 422 `key-reused` (this key
 * was first sent with another method, path, media type or body: a new operation needs a new key), 400
 * `key-missing` (something on the way stripped the header, or the server reads another header name) or 400
 * `key-malformed`. Never retried: the same request gets the same refusal.
 */
export class KeyRejectedError extends OncelyError {
  override name = 'KeyRejectedError' as const;
  constructor(
    readonly key: string,
    readonly reason: KeyRejection,
    readonly status: number,
    readonly problem: ProblemDetails,
  ) {
    super(
      'ONCELY_KEY_REJECTED',
      `the server refused the idempotency key (${reason}): ${problem.detail ?? status}`,
    );
  }
}

/** Why a body cannot be sent the same way on every attempt. */
export type NotReplayableReason = 'used' | 'too-large';

/**
 * The request body cannot be re-sent identically on a retry: a stream that was read or locked already, or a stream
 * longer than `maxStreamBytes` (the client reads a stream into memory once, before the first attempt, so every
 * attempt sends the same bytes). Thrown before anything is sent.
 */
export class BodyNotReplayableError extends OncelyError {
  override name = 'BodyNotReplayableError' as const;
  constructor(
    readonly reason: NotReplayableReason,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super('ONCELY_BODY_NOT_REPLAYABLE', message, options);
  }
}

function lastSeen(response: Response | undefined, cause: unknown): string {
  if (response !== undefined) return `status ${response.status}`;
  return cause instanceof Error ? cause.message : 'no answer';
}

const guard =
  <T extends OncelyError>(name: string) =>
  (error: unknown): error is T =>
    error instanceof Error && error.name === name && 'code' in error;

export const isRetriesExhaustedError = guard<RetriesExhaustedError>('RetriesExhaustedError');
export const isDeadlineExceededError = guard<DeadlineExceededError>('DeadlineExceededError');
export const isKeyRejectedError = guard<KeyRejectedError>('KeyRejectedError');
export const isBodyNotReplayableError = guard<BodyNotReplayableError>('BodyNotReplayableError');
