/**
 * @module Every answer the layer gives on its own, from the engine's results and errors: replays with
 * `Idempotent-Replayed`, 202 for deferred work, and the one map from an error to its status and problem body.
 */
import {
  isCorruptRecordError,
  isFingerprintMismatchError,
  isInProgressError,
  isInvalidKeyError,
  isLeaseLostError,
  isRecordUnreadableError,
  isStoreUnavailableError,
  isTransactionEscapedError,
  TransactionEscapedError,
} from '../core/errors.js';
import { isEscapedOutcome } from '../core/escaped-outcome.js';
import type { OpenedOutcome } from '../core/record.js';
import { type HttpAnswer, problemAnswer, retryAfterSeconds } from './problem.js';

/**
 * The one place where errors and stored outcomes become HTTP answers, shared by every adapter so all of them
 * answer identically. `docs/http.md` has the table; `docs/errors.md` one section per problem type.
 */

export const REPLAYED_HEADER = 'idempotent-replayed';
const REPLAYED: readonly [string, string] = [REPLAYED_HEADER, 'true'];

/** How long a client should wait after a 503 before trying again. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/**
 * The answer to a replay: the stored status, kept headers and byte-identical body plus `Idempotent-Replayed:
 * true`. When the body was over the size cap and no blob store kept it, a problem with the original status
 * (the effect did happen: a 2xx stays a 2xx, so no client retries with a fresh key) and the stored headers that
 * do not describe the missing body (a `Location` stays).
 */
export function replayAnswer(opened: OpenedOutcome): HttpAnswer {
  // The status route reads records itself (the engine answers the mark before any replay is built).
  if (isEscapedOutcome(opened.retained ? opened.outcome : opened)) {
    return escapedAnswer(new TransactionEscapedError(undefined, { replayed: true }));
  }
  if (opened.retained) {
    const { status, headers, body } = opened.outcome;
    return { status, headers: [...headers, REPLAYED], body };
  }
  const kept: (readonly [string, string])[] = [REPLAYED];
  for (const [name, value] of opened.headers) if (!name.startsWith('content-')) kept.push([name, value]);
  return problemAnswer(
    'response-not-retained',
    `the request with this key completed with status ${opened.status}, but its response was too large to keep`,
    { status: opened.status, headers: kept, members: { originalStatus: opened.status } },
  );
}

/** Where a long-running request can be polled, when the route is long-running. */
export interface AnswerContext {
  readonly accepted?: { readonly location: string; readonly pollAfterMs: number } | undefined;
}

/**
 * Maps the typed errors of the engine to answers; undefined for any other error (the handler's own, which the
 * framework's error handling deals with).
 *
 * | error | answer |
 * | --- | --- |
 * | InvalidKeyError | 400 key-missing / key-malformed |
 * | InProgressError | 409 request-in-progress + Retry-After (202 + Location on a long-running route) |
 * | FingerprintMismatchError | 422 key-reused |
 * | StoreUnavailableError | 503 store-unavailable + Retry-After |
 * | LeaseLostError | 503 lease-lost + Retry-After: another caller owns the key now; a retry gets its answer |
 * | CorruptRecordError | 500 record-corrupt |
 * | RecordUnreadableError | 500 record-unreadable: encryption at rest could not open the record; never re-run |
 * | TransactionEscapedError | 500 transaction-escaped: the handler ended its transaction; stored, never re-run |
 */
export function answerForError(error: unknown, context: AnswerContext = {}): HttpAnswer | undefined {
  if (isInvalidKeyError(error)) {
    return error.reason === 'missing'
      ? problemAnswer('key-missing', 'this request needs an Idempotency-Key header')
      : problemAnswer('key-malformed', error.message, { members: { reason: error.reason } });
  }
  if (isInProgressError(error)) {
    const { accepted } = context;
    if (accepted !== undefined) return acceptedAnswer(accepted.location, accepted.pollAfterMs);
    return problemAnswer(
      'request-in-progress',
      'a request with this key is still being processed; retry later',
      {
        retryAfterSeconds: retryAfterSeconds(error.retryAfterMs),
      },
    );
  }
  if (isFingerprintMismatchError(error)) {
    return problemAnswer(
      'key-reused',
      'this key was first used with another request (method, path, media type or body); use a new key for a new request',
    );
  }
  if (isStoreUnavailableError(error)) {
    return problemAnswer('store-unavailable', 'the idempotency store cannot be reached; retry later', {
      retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
    });
  }
  if (isLeaseLostError(error)) {
    return problemAnswer(
      'lease-lost',
      'this request ran past its claim on the key and another attempt took it over; retry to get that answer',
      { retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS },
    );
  }
  if (isCorruptRecordError(error)) {
    return problemAnswer('record-corrupt', 'the stored response for this key cannot be read');
  }
  if (isRecordUnreadableError(error)) {
    // Neither the reason nor the key id goes to the client: which keys the server holds is its own business.
    return problemAnswer(
      'record-unreadable',
      'the stored response for this key cannot be decrypted; the request was not run again',
    );
  }
  if (isTransactionEscapedError(error)) return escapedAnswer(error);
  return undefined;
}

const ESCAPED_DETAIL = {
  terminal:
    'the handler ended the transaction it was given, so its writes may have committed outside the idempotency record; this answer is stored and repeated for this key, which will not run again. Do not retry under a new key: check the operation first',
  released:
    'the handler ended the transaction it was given and rolled it back; nothing of it was stored, and a retry with this key runs it again',
  unknown:
    'the handler ended the transaction it was given, so its writes may have committed outside the idempotency record, and this failure could not be stored; do not retry under a new key: check the operation first',
} as const;

/**
 * 500 `transaction-escaped`: a bug in the server's handler, not in the request, so a 5xx; not 503, since waiting
 * does not help (the failure is stored and repeated for the key's retention), and not a 4xx such as 409 or 422,
 * which tell the client to retry or to use a new key, the one thing that could run an effect twice here.
 */
function escapedAnswer(error: TransactionEscapedError): HttpAnswer {
  return problemAnswer('transaction-escaped', ESCAPED_DETAIL[error.keyOutcome], {
    members: { keyOutcome: error.keyOutcome },
  });
}

/** 202 Accepted for a long-running request: poll `Location`; the final answer replays there. */
export function acceptedAnswer(location: string | undefined, pollAfterMs: number): HttpAnswer {
  const headers: [string, string][] = [
    ['content-type', 'application/json'],
    ['retry-after', String(retryAfterSeconds(pollAfterMs))],
  ];
  if (location !== undefined) headers.push(['location', location]);
  return {
    status: 202,
    headers,
    body: Buffer.from(JSON.stringify({ status: 'in-progress', location }), 'utf8'),
  };
}
