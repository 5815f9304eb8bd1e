/**
 * @module The abort signals of the client's attempts: each attempt's signal knows which limit fired (the caller, the
 * overall deadline, the attempt timeout), since each one ends the call differently.
 */
/** Which limit ended an attempt. */
export type AbortCause = 'caller' | 'deadline' | 'attempt-timeout';

export interface AttemptSignal {
  readonly signal: AbortSignal;
  /** What aborted the attempt, or undefined while it runs. */
  readonly cause: () => AbortCause | undefined;
  /** A promise that rejects when the attempt is aborted: raced against a fetch that ignores its signal. */
  readonly aborted: Promise<never>;
  /**
   * Stops the timers. `keepCaller`: the caller's signal still aborts this attempt's response (its body is read
   * after the call returns, as with fetch); otherwise the link is removed, so a long-lived caller signal does not
   * collect one listener per discarded attempt.
   */
  readonly settle: (keepCaller: boolean) => void;
}

/**
 * One attempt's signal, aborted by whichever comes first: the caller's signal, the overall deadline, or the
 * attempt's own timeout. Hand-made rather than `AbortSignal.any` (Node 20.3+), because the client must know which
 * one fired: a timeout is retried, a deadline gives up, the caller's abort is the caller's.
 */
export function attemptSignal(
  caller: AbortSignal | undefined,
  msToDeadline: number,
  attemptTimeoutMs: number,
): AttemptSignal {
  const controller = new AbortController();
  let cause: AbortCause | undefined;
  let rejectAborted: (reason: unknown) => void = () => {};
  const aborted = new Promise<never>((_resolve, reject) => {
    rejectAborted = reject;
  });
  // Unobserved until raced; without this a settled attempt would report an unhandled rejection.
  aborted.catch(() => {});
  const abort = (why: AbortCause, reason: unknown) => {
    if (cause !== undefined) return;
    cause = why;
    controller.abort(reason);
    rejectAborted(reason);
  };
  const onCallerAbort = () => abort('caller', caller?.reason);
  const timer =
    msToDeadline <= attemptTimeoutMs
      ? setTimeout(() => abort('deadline', timeoutReason('the overall deadline passed')), msToDeadline)
      : setTimeout(() => abort('attempt-timeout', timeoutReason('the attempt timed out')), attemptTimeoutMs);
  if (caller?.aborted) onCallerAbort();
  else caller?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    cause: () => cause,
    aborted,
    settle: (keepCaller) => {
      clearTimeout(timer);
      if (!keepCaller) caller?.removeEventListener('abort', onCallerAbort);
    },
  };
}

/** Waits `ms`, or rejects with the caller's abort reason as soon as the caller aborts. */
export function sleep(ms: number, caller: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (caller?.aborted) return reject(caller.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(caller?.reason);
    };
    const timer = setTimeout(() => {
      caller?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    caller?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The reason a timed-out fetch is aborted with: a `TimeoutError`, as `AbortSignal.timeout` uses. */
function timeoutReason(message: string): DOMException {
  return new DOMException(message, 'TimeoutError');
}
