/**
 * @module How a broker consumer reports the errors it recovers from by itself: to the caller's `onError`, or else as
 * one process warning per run of failures, so an outage is neither silent nor a line per retry.
 */
/**
 * Receives an error a consumer recovered from by itself (the message stays unacknowledged and comes back, the
 * loop tries again): `operation` says which step failed. For logs and alerts; the consumer keeps going.
 */
export type ConsumerErrorHandler = (error: unknown, operation: string) => void;

export interface ErrorReporter {
  /** Reports a failure of `operation`. */
  failed(error: unknown, operation: string): void;
  /** A step went through again: the next failure starts a new run of failures. */
  recovered(): void;
}

/**
 * The error path of a consumer loop. With `onError`, every failure goes there. Without it, the first failure of
 * a run of failures becomes a process warning (`ONCELY_CONSUMER_ERROR`): an outage must neither pass unseen nor
 * print one line per retry.
 */
export function errorReporter(source: string, onError: ConsumerErrorHandler | undefined): ErrorReporter {
  let failing = false;
  const warn = (error: unknown, text: string) => {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    process.emitWarning(`${source}: ${text} (${reason})`, { code: 'ONCELY_CONSUMER_ERROR' });
  };
  return {
    failed(error, operation) {
      if (onError === undefined) {
        if (!failing) warn(error, `${operation} failed; retrying, and not reporting again until it recovers`);
        failing = true;
        return;
      }
      try {
        onError(error, operation);
      } catch (hookError) {
        // The hook itself is broken: say so once per run of failures, and keep the loop going.
        if (!failing) warn(hookError, `onError threw while reporting a failed ${operation}`);
        failing = true;
      }
    },
    recovered() {
      failing = false;
    },
  };
}
