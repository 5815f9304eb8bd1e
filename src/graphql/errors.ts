/**
 * @module How oncely's refusals read in a GraphQL response: each becomes a `GraphQLError` on the idempotent field
 * alone, with a stable `extensions.code`, the HTTP status an HTTP adapter would answer (`extensions.http`, which
 * graphql-yoga and Apollo Server turn into the response's status and headers and leave out of the body, each in
 * its own shape: the server binding writes it) and, where waiting helps, `retryAfter` in seconds. The same table as
 * src/http/answers.ts, in GraphQL's terms.
 */
import { GraphQLError } from 'graphql';
import {
  isFingerprintMismatchError,
  isInProgressError,
  isInvalidKeyError,
  isLeaseLostError,
  isResponseNotRetainedError,
  isStoreUnavailableError,
} from '../core/errors.js';
import { retryAfterSeconds } from '../http/problem.js';
import type { ServerBinding } from './binding.js';

/** The `extensions.code` of every error the plugin gives on its own. */
export type IdempotencyErrorCode =
  | 'IDEMPOTENCY_KEY_INVALID'
  | 'IDEMPOTENCY_CONFLICT'
  | 'IDEMPOTENCY_MISMATCH'
  | 'IDEMPOTENCY_UNAVAILABLE'
  | 'IDEMPOTENCY_LEASE_LOST'
  | 'IDEMPOTENCY_NOT_RETAINED';

/** How long a client should wait after the store failed, as the HTTP adapters say it. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/**
 * The GraphQL error for one of oncely's typed errors; undefined for any other error (the resolver's own, left as
 * the server's error handling and masking treat it). The oncely error is not the `originalError`: graphql-yoga
 * masks an error whose original is not a GraphQLError, and these are meant for the client.
 */
export function graphqlErrorFor(error: unknown, http: ServerBinding['http']): GraphQLError | undefined {
  const refusal = (
    message: string,
    code: IdempotencyErrorCode,
    status: number,
    retryAfter?: number,
    more: Readonly<Record<string, string>> = {},
  ): GraphQLError => {
    // The binding's shape for `http`, whatever graphql's declared extensions (graphql-yoga narrows them) say.
    const head = http(status, retryAfter);
    const extensions: Record<string, unknown> =
      retryAfter === undefined ? { code, http: head, ...more } : { code, http: head, retryAfter, ...more };
    return new GraphQLError(message, { extensions });
  };
  if (isInvalidKeyError(error))
    return refusal(error.message, 'IDEMPOTENCY_KEY_INVALID', 400, undefined, { reason: error.reason });
  if (isInProgressError(error)) {
    return refusal(
      'a request with this idempotency key is still being processed; retry later',
      'IDEMPOTENCY_CONFLICT',
      409,
      retryAfterSeconds(error.retryAfterMs),
    );
  }
  if (isFingerprintMismatchError(error)) {
    return refusal(
      'this idempotency key was first used with other arguments; use a new key for a new request',
      'IDEMPOTENCY_MISMATCH',
      422,
    );
  }
  if (isStoreUnavailableError(error)) {
    return refusal(
      'the idempotency store cannot be reached; retry later',
      'IDEMPOTENCY_UNAVAILABLE',
      503,
      UNAVAILABLE_RETRY_AFTER_SECONDS,
    );
  }
  if (isLeaseLostError(error)) {
    return refusal(
      'this request ran past its claim on the idempotency key and another attempt took it over; retry to get that answer',
      'IDEMPOTENCY_LEASE_LOST',
      503,
      UNAVAILABLE_RETRY_AFTER_SECONDS,
    );
  }
  if (isResponseNotRetainedError(error)) {
    // The effect did happen: no status that would make a client retry under a new key.
    return new GraphQLError(
      'the request with this idempotency key completed, but its result was too large to keep',
      { extensions: { code: 'IDEMPOTENCY_NOT_RETAINED' } },
    );
  }
  return undefined;
}
