/**
 * @module `eventually`: an attempt retried until it succeeds or a deadline passes, for a client that is
 * reconnecting on its own schedule (the server was killed and started again): the tests await the client serving
 * again instead of sleeping for a guess of how long that takes.
 */

/** Runs `attempt` every 100 ms until it resolves; past `withinMs`, its last error is thrown. */
export async function eventually<T>(attempt: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
