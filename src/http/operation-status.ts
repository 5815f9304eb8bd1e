/**
 * @module The status route of long-running requests: what `GET <location>` answers for a record id (202 while the
 * work runs, its stored response once done, 404 otherwise), through the same store guard as every request.
 */
import { StoreUnavailableError } from '../core/errors.js';
import { openOutcome } from '../core/record.js';
import { acceptedAnswer, answerForError, replayAnswer } from './answers.js';
import type { ResolvedRoute, Shared } from './options.js';
import { type HttpAnswer, problemAnswer } from './problem.js';

// A storage key is a SHA-256 in base64url: 43 characters. Anything else cannot name a record.
const RECORD_ID = /^[A-Za-z0-9_-]{43}$/;
const DEFAULT_POLL_AFTER_MS = 1_000;

/**
 * The status route of long-running requests (`GET <location>`): 202 + `Retry-After` while the work runs, the
 * stored response (as a replay) once it completed, 404 when it failed (the key was released: retry the original
 * request with the same key) or is unknown. The id is the SHA-256 of scope and key: it can only be known by
 * someone who could send the original request (the default scope includes the client's credentials).
 */
export async function operationStatus<Req>(
  shared: Shared,
  route: ResolvedRoute<Req>,
  id: string | undefined,
): Promise<HttpAnswer> {
  if (id === undefined || !RECORD_ID.test(id)) return notFound();
  let record: Awaited<ReturnType<Shared['engine']['inspect']>>;
  try {
    // Through the engine's guard: bounded by storeTimeoutMs, shed by the open circuit, like every store call.
    record = await shared.engine.inspect(id);
  } catch (error) {
    return (answerForError(error) ??
      answerForError(new StoreUnavailableError(String(error), { cause: error })))!;
  }
  if (record === undefined) return notFound();
  if (record.state === 'inProgress') {
    const longRunning = route.longRunning;
    const pollAfterMs = longRunning?.pollAfterMs ?? DEFAULT_POLL_AFTER_MS;
    return acceptedAnswer(longRunning?.location(id), pollAfterMs);
  }
  if (record.state === 'released' || record.outcome === undefined) {
    return problemAnswer(
      'operation-failed',
      'the operation did not complete (its handler failed or chose not to store its answer); retry the original request with the same key',
    );
  }
  const envelope = {
    compressAboveBytes: Number.MAX_SAFE_INTEGER,
    maxBodyBytes: shared.maxBodyBytes,
    blobStore: shared.blobStore,
  };
  try {
    return replayAnswer(await openOutcome(record.outcome, envelope));
  } catch (error) {
    return (
      answerForError(error) ??
      problemAnswer('record-corrupt', 'the stored response for this operation cannot be read')
    );
  }
}

function notFound(): HttpAnswer {
  return problemAnswer(
    'operation-not-found',
    'no operation with this id is running or stored (it may have expired)',
  );
}
