/**
 * @module How oncely's refusals read in tRPC: each becomes a `TRPCError` whose code tRPC answers with the status an
 * HTTP adapter would (CONFLICT 409, UNPROCESSABLE_CONTENT 422, SERVICE_UNAVAILABLE 503, BAD_REQUEST 400), with the
 * oncely error as its `cause`; `idempotencyErrorData(error)` reads back what a client needs (a stable code and the
 * seconds to wait) for an `errorFormatter` or `responseMeta`.
 */
import { TRPCError } from '@trpc/server';
import {
  isFingerprintMismatchError,
  isInProgressError,
  isInvalidKeyError,
  isLeaseLostError,
  isOncelyError,
  isResponseNotRetainedError,
  isStoreUnavailableError,
} from '../core/errors.js';
import { retryAfterSeconds } from '../http/problem.js';

/** The stable codes of the refusals, as oncely/graphql names them too. */
export type IdempotencyErrorCode =
  | 'IDEMPOTENCY_KEY_INVALID'
  | 'IDEMPOTENCY_CONFLICT'
  | 'IDEMPOTENCY_MISMATCH'
  | 'IDEMPOTENCY_UNAVAILABLE'
  | 'IDEMPOTENCY_LEASE_LOST'
  | 'IDEMPOTENCY_NOT_RETAINED';

/** What a client is told about a refusal: its code and, where waiting helps, the seconds to wait. */
export interface IdempotencyErrorData {
  readonly code: IdempotencyErrorCode;
  /** Whole seconds, as a `Retry-After` header says them. */
  readonly retryAfter?: number;
}

/** How long a client should wait after the store failed, as the HTTP adapters say it. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** The TRPCError for one of oncely's typed errors; undefined for any other error. */
export function trpcErrorFor(error: unknown): TRPCError | undefined {
  if (isInvalidKeyError(error))
    return new TRPCError({ code: 'BAD_REQUEST', message: error.message, cause: error });
  if (isInProgressError(error))
    return new TRPCError({
      code: 'CONFLICT',
      message: 'a request with this idempotency key is still being processed; retry later',
      cause: error,
    });
  if (isFingerprintMismatchError(error))
    return new TRPCError({
      code: 'UNPROCESSABLE_CONTENT',
      message: 'this idempotency key was first used with another input; use a new key for a new request',
      cause: error,
    });
  if (isStoreUnavailableError(error))
    return new TRPCError({
      code: 'SERVICE_UNAVAILABLE',
      message: 'the idempotency store cannot be reached; retry later',
      cause: error,
    });
  if (isLeaseLostError(error))
    return new TRPCError({
      code: 'SERVICE_UNAVAILABLE',
      message:
        'this call ran past its claim on the idempotency key and another attempt took it over; retry to get that answer',
      cause: error,
    });
  if (isResponseNotRetainedError(error))
    return new TRPCError({
      code: 'INTERNAL_SERVER_ERROR',
      message: 'the call with this idempotency key completed, but its result was too large to keep',
      cause: error,
    });
  return undefined;
}

/**
 * The code and retry-after of an error `idempotent()` refused a call with (a `TRPCError` whose cause is oncely's
 * error, or that error itself); undefined for any other error. For the `errorFormatter` (into `shape.data`) and
 * `responseMeta` (a `Retry-After` header).
 */
export function idempotencyErrorData(error: unknown): IdempotencyErrorData | undefined {
  // By name, as tRPC's own checks go: a second copy of @trpc/server (ESM and CommonJS builds) makes its own class.
  const wrapped = error instanceof Error && error.name === 'TRPCError';
  const cause = wrapped ? error.cause : error;
  if (!isOncelyError(cause)) return undefined;
  // A resolver's own oncely error (from an idempotent() it calls) reaches the client as tRPC's 500, not as ours.
  if (wrapped && (error as TRPCError).code !== trpcErrorFor(cause)?.code) return undefined;
  if (isInvalidKeyError(cause)) return { code: 'IDEMPOTENCY_KEY_INVALID' };
  if (isInProgressError(cause))
    return { code: 'IDEMPOTENCY_CONFLICT', retryAfter: retryAfterSeconds(cause.retryAfterMs) };
  if (isFingerprintMismatchError(cause)) return { code: 'IDEMPOTENCY_MISMATCH' };
  if (isStoreUnavailableError(cause))
    return { code: 'IDEMPOTENCY_UNAVAILABLE', retryAfter: UNAVAILABLE_RETRY_AFTER_SECONDS };
  if (isLeaseLostError(cause))
    return { code: 'IDEMPOTENCY_LEASE_LOST', retryAfter: UNAVAILABLE_RETRY_AFTER_SECONDS };
  if (isResponseNotRetainedError(cause)) return { code: 'IDEMPOTENCY_NOT_RETAINED' };
  return undefined;
}
