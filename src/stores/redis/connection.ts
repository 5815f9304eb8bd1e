/**
 * @module The Redis store's connection policy: refuse a call at once while the client reconnects (rather than let
 * ioredis queue it to run after the caller gave up), wait a little for a connection being established, and turn
 * driver errors into oncely errors.
 */
import { CorruptRecordError, isOncelyError, StoreUnavailableError } from '../../core/errors.js';

/** What the gate reads of a client: ioredis' own `status` and `ready` event, or an adapter's view of them. */
export interface GatedClient {
  /** ioredis' words: `wait`, `connecting`, `connect`, `ready`, `reconnecting`, `close`, `end`. */
  readonly status: string;
  once(event: 'ready', listener: () => void): unknown;
}

/**
 * Fails fast instead of queueing: a call made while the client is reconnecting after a failure is refused at
 * once with `StoreUnavailableError`, so it never sits in ioredis' offline queue to run later, after the caller
 * gave up (a late `begin` would hold the key for a whole lease with nobody running). A client that is still
 * establishing its connection (startup, or a reconnect attempt in progress) is waited for, up to `connectWaitMs`.
 */
export class ConnectionGate {
  readonly #client: GatedClient;
  readonly #connectWaitMs: number;
  #nextReady: Promise<void> | undefined;

  constructor(client: GatedClient, connectWaitMs: number) {
    this.#client = client;
    this.#connectWaitMs = connectWaitMs;
  }

  /** Resolves when commands may be sent (undefined when they may be sent right now, to save a tick). */
  check(operation: string): Promise<void> | undefined {
    const status = this.#client.status;
    // 'wait' is a lazyConnect client that has not dialled yet: the first command makes it connect.
    if (status === 'ready' || status === 'wait') return undefined;
    if (status === 'connecting' || status === 'connect') return this.#awaitReady(operation);
    return Promise.reject(
      new StoreUnavailableError(`redis ${operation} refused: the connection is ${status}`),
    );
  }

  #awaitReady(operation: string): Promise<void> {
    // One shared listener for every waiting call, so a burst of requests adds one listener, not thousands.
    this.#nextReady ??= new Promise<void>((resolve) => {
      this.#client.once('ready', () => {
        this.#nextReady = undefined;
        resolve();
      });
    });
    const ready = this.#nextReady;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const status = this.#client.status;
        reject(
          new StoreUnavailableError(
            `redis ${operation} refused: not connected after ${this.#connectWaitMs} ms (${status})`,
          ),
        );
      }, this.#connectWaitMs);
      ready.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * Driver errors as oncely errors: a record of the wrong type is corrupt (someone else wrote the key); everything
 * else (connection lost, timeouts, READONLY after a failover, OOM under maxmemory, a script error) means the
 * store cannot do its job now, so callers fail closed with `StoreUnavailableError`, the driver's error as `cause`.
 */
export function toStoreError(operation: string, error: unknown): Error {
  if (isOncelyError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (message.startsWith('WRONGTYPE')) {
    return new CorruptRecordError(`redis ${operation}: the key holds a value that is not an oncely record`, {
      cause: error,
    });
  }
  return new StoreUnavailableError(`redis ${operation} failed: ${message}`, { cause: error });
}
