/**
 * @module The one sleep of the messaging loops: cut short by their stop signal, so shutdown never waits out a pause.
 */
/** Waits `ms`, or less when `signal` is aborted. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
