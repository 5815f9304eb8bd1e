import { CircuitBreaker, type CircuitBreakerOptions } from './circuit-breaker.js';
import { DeadlineQueue } from './deadline-queue.js';
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
 * Runs store calls fail-closed: each call is bounded by `timeoutMs` (on one shared timer, see `DeadlineQueue`), a
 * circuit breaker sheds calls to a store that keeps failing, and any error that is not already an `OncelyError`
 * becomes `StoreUnavailableError` with the driver's error as `cause` (so SQLSTATEs and Redis replies stay
 * inspectable).
 */
export class StoreGuard {
  readonly #store: Store;
  readonly #timeoutMs: number;
  readonly #breaker: CircuitBreaker | undefined;
  readonly #emit: EventHandler;
  readonly #deadlines: DeadlineQueue;

  constructor(store: Store, options: GuardOptions, emit: EventHandler) {
    this.#store = store;
    this.#timeoutMs = options.timeoutMs;
    this.#deadlines = new DeadlineQueue(options.timeoutMs);
    this.#breaker = options.breaker === false ? undefined : new CircuitBreaker(options.breaker);
    this.#emit = emit;
  }

  /** The store's short name, for messages. */
  get storeName(): string {
    return this.#store.name;
  }

  /**
   * Runs `run` against the store. Not an `async` function with `Promise.race` and a `setTimeout`: this runs twice
   * per request, and the plain promise with a shared deadline costs a fraction of that.
   *
   * `onLate` receives an answer that arrives after the caller was told the call timed out: a `begin` that
   * claimed the key after its caller gave up must be released, or the key stays held for a whole lease.
   * `timed: false` leaves the call unbounded here, for calls whose waiting is bounded by the store itself.
   */
  call<T>(
    operation: string,
    run: (store: Store) => Promise<T>,
    onLate?: (result: T) => void,
    timed = true,
  ): Promise<T> {
    const breaker = this.#breaker;
    if (breaker !== undefined && !breaker.tryAcquire()) {
      return Promise.reject(
        new StoreUnavailableError(`the ${this.#store.name} store is failing; circuit open`),
      );
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const expire = () => {
        settled = true;
        reject(
          this.#failed(
            operation,
            new StoreUnavailableError(
              `${this.#store.name} ${operation} timed out after ${this.#timeoutMs} ms`,
            ),
          ),
        );
      };
      const deadline = timed ? this.#deadlines.add(expire) : undefined;
      let pending: Promise<T>;
      try {
        pending = run(this.#store);
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        (result) => {
          // The caller has moved on with a StoreUnavailableError; only `onLate` may still act on this answer.
          if (settled) {
            if (onLate !== undefined) onLate(result);
            return;
          }
          if (deadline !== undefined) this.#deadlines.cancel(deadline);
          breaker?.onSuccess();
          resolve(result);
        },
        (error: unknown) => {
          if (settled) return;
          if (deadline !== undefined) this.#deadlines.cancel(deadline);
          reject(this.#failed(operation, error));
        },
      );
    });
  }

  /** Maps a failed call to the error the caller sees, and tells the breaker whether the store is at fault. */
  #failed(operation: string, error: unknown): OncelyError {
    const mapped = toOncelyError(this.#store.name, operation, error);
    if (mapped.code === 'ONCELY_STORE_UNAVAILABLE') {
      this.#breaker?.onFailure();
      this.#emit({ type: 'storeError', operation, error: mapped });
    } else {
      this.#breaker?.onSuccess();
    }
    return mapped;
  }
}

function toOncelyError(storeName: string, operation: string, error: unknown): OncelyError {
  if (isOncelyError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`${storeName} ${operation} failed: ${message}`, { cause: error });
}
