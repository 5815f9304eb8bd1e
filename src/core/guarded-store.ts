import { CircuitBreaker, type CircuitBreakerOptions } from './circuit-breaker.js';
import { isOncelyError, type OncelyError, StoreUnavailableError } from './errors.js';
import type { EventHandler } from './events.js';
import type { Store } from './store.js';

export interface GuardOptions {
  /** A store call slower than this fails with `StoreUnavailableError`. Default 2,000 ms. */
  readonly timeoutMs: number;
  /** `false` turns the breaker off. */
  readonly breaker: CircuitBreakerOptions | false;
}

/**
 * Runs store calls fail-closed: each call is bounded by `timeoutMs`, a circuit breaker sheds calls to a store
 * that keeps failing, and any error that is not already an `OncelyError` becomes `StoreUnavailableError` with the
 * driver's error as `cause` (so SQLSTATEs and Redis replies stay inspectable).
 */
export class StoreGuard {
  readonly #store: Store;
  readonly #timeoutMs: number;
  readonly #breaker: CircuitBreaker | undefined;
  readonly #emit: EventHandler;

  constructor(store: Store, options: GuardOptions, emit: EventHandler) {
    this.#store = store;
    this.#timeoutMs = options.timeoutMs;
    this.#breaker = options.breaker === false ? undefined : new CircuitBreaker(options.breaker);
    this.#emit = emit;
  }

  async call<T>(operation: string, run: (store: Store) => Promise<T>): Promise<T> {
    const breaker = this.#breaker;
    if (breaker !== undefined && !breaker.tryAcquire()) {
      throw new StoreUnavailableError(`the ${this.#store.name} store is failing; circuit open`);
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new StoreUnavailableError(
              `${this.#store.name} ${operation} timed out after ${this.#timeoutMs} ms`,
            ),
          ),
        this.#timeoutMs,
      );
    });
    try {
      const result = await Promise.race([run(this.#store), timeout]);
      breaker?.onSuccess();
      return result;
    } catch (error) {
      const mapped = toOncelyError(this.#store.name, operation, error);
      if (mapped.code === 'ONCELY_STORE_UNAVAILABLE') {
        breaker?.onFailure();
        this.#emit({ type: 'storeError', operation, error: mapped });
      } else {
        breaker?.onSuccess();
      }
      throw mapped;
    } finally {
      clearTimeout(timer);
    }
  }
}

function toOncelyError(storeName: string, operation: string, error: unknown): OncelyError {
  if (isOncelyError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`${storeName} ${operation} failed: ${message}`, { cause: error });
}
