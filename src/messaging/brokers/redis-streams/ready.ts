/**
 * @module Waiting for the Redis Streams consumer's own client to take commands, since its offline queue is off and a
 * command sent early just fails: connects a lazy client, and tells a client that is down (report and wait again)
 * from one that was closed (only its owner can reopen it).
 */
import type { Redis } from 'ioredis';

/**
 * Resolves once `client` can take commands, or at once when `signal` is aborted. A client made with
 * `lazyConnect` is connected here (nothing else would connect it: with its offline queue off, a command sent
 * before then just fails). Rejects when the client is not ready within `timeoutMs` (Redis down: the caller
 * reports it and waits again), and when it was closed (`quit()`, `disconnect()`, or a retry strategy that gave
 * up): only its owner can open it again.
 */
export async function whenReady(client: Redis, signal: AbortSignal, timeoutMs: number): Promise<void> {
  if (client.status === 'ready' || signal.aborted) return;
  if (client.status === 'wait') {
    await client.connect();
    return;
  }
  if (client.status === 'end') throw new Error('the Redis client is closed (status "end")');
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        done(new Error(`the Redis client was not ready within ${timeoutMs} ms (status "${client.status}")`)),
      timeoutMs,
    );
    const done = (error?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onReady = () => done();
    const onAbort = () => done();
    const onEnd = () => done(new Error('the Redis client was closed while the consumer waited for it'));
    client.once('ready', onReady);
    client.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
