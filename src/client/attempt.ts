/**
 * @module One attempt of the client: a fetch raced against the attempt's abort, so a limit holds even for a fetch
 * that ignores its signal, and its outcome as an answer, a network failure or an abort.
 */
import type { FetchFunction } from './options.js';
import type { AbortCause, AttemptSignal } from './signals.js';

/** One HTTP request's end: an answer, a network failure, or an abort by one of the limits. */
export type Attempt =
  | { readonly kind: 'answer'; readonly response: Response }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'aborted'; readonly cause: AbortCause; readonly reason: unknown };

/**
 * Sends one attempt. The fetch is raced against the attempt's abort, so a limit holds even for a caller's fetch
 * that ignores its signal; an answer such a fetch sends after that has its body cancelled, freeing its connection.
 */
export async function runAttempt(
  fetchImpl: FetchFunction,
  input: string | URL,
  init: RequestInit,
  signal: AttemptSignal,
): Promise<Attempt> {
  let pending: Promise<Response>;
  try {
    pending = Promise.resolve(fetchImpl(input, init));
  } catch (error) {
    pending = Promise.reject(error);
  }
  try {
    return { kind: 'answer', response: await Promise.race([pending, signal.aborted]) };
  } catch (error) {
    const cause = signal.cause();
    if (cause === undefined) return { kind: 'failed', error };
    pending.then(
      (late) => late.body?.cancel().catch(() => {}),
      () => {},
    );
    return { kind: 'aborted', cause, reason: error };
  }
}
