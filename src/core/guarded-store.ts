/**
 * @module `StoreGuard`: every store call bounded by `storeTimeoutMs` and behind the circuit breaker, failing closed
 * with `StoreUnavailableError` and reporting each failure as a `storeError` event.
 */
import { CircuitBreaker, type CircuitBreakerOptions } from './circuit-breaker.js';
import { type Deadline, DeadlineQueue } from './deadline-queue.js';
import type { Emit } from './emit.js';
import { isOncelyError, type OncelyError, StoreUnavailableError } from './errors.js';
import type { Store } from './store.js';

/** A store call in flight, as the guard sees it: its deadline, and what it was for (in messages). */
interface PendingCall extends Deadline {
  readonly operation: string;
}

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
  readonly #emit: Emit;
  readonly #deadlines: DeadlineQueue;

  constructor(store: Store, options: GuardOptions, emit: Emit) {
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
    return this.callWith(
      operation,
      runAlone as (store: Store, run: (store: Store) => Promise<T>) => Promise<T>,
      run,
      onLate,
      timed,
    );
  }

  /**
   * `call`, for the calls every request makes: `run` is given `arg` (a function made once, and the call's input,
   * rather than a closure made per call over both), and so is `onLate`.
   */
  callWith<T, A>(
    operation: string,
    run: (store: Store, arg: A) => Promise<T>,
    arg: A,
    onLate?: (result: T, arg: A) => void,
    timed = true,
  ): Promise<T> {
    const breaker = this.#breaker;
    if (breaker !== undefined && !breaker.tryAcquire()) {
      return Promise.reject(
        new StoreUnavailableError(`the ${this.#store.name} store is failing; circuit open`),
      );
    }
    const call = new GuardedCall<T, A>(this, operation, arg, onLate);
    const promise = new Promise<T>(captureSettlers);
    call.resolve = nextResolve as (value: T) => void;
    call.reject = nextReject;
    if (timed) this.#deadlines.insert(call);
    let pending: Promise<T>;
    try {
      pending = run(this.#store, arg);
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (result) => call.answered(result),
      (error: unknown) => call.failed(error),
    );
    return promise;
  }

  /** The call's answer came in time (its deadline is marked done already): the breaker hears of a success. */
  succeeded(): void {
    this.#breaker?.onSuccess();
  }

  /** The call failed in time: the error the caller sees (and the breaker and events hear of). */
  rejected(call: PendingCall, error: unknown): OncelyError {
    return this.#failed(call.operation, error);
  }

  /** The call's deadline passed before the store answered. */
  expired(call: PendingCall): OncelyError {
    return this.#failed(
      call.operation,
      new StoreUnavailableError(
        `${this.#store.name} ${call.operation} timed out after ${this.#timeoutMs} ms`,
      ),
    );
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

// `new Promise(executor)` calls the executor at once: a shared executor that parks the settling functions here, for
// the caller to take straight after, spares every store call a closure (and its context) made only to catch them.
let nextResolve: (value: unknown) => void = () => {};
let nextReject: (reason: unknown) => void = () => {};
function captureSettlers(resolve: (value: never) => void, reject: (reason: unknown) => void): void {
  nextResolve = resolve as (value: unknown) => void;
  nextReject = reject;
}

/**
 * One store call under the guard: its own deadline in the guard's queue, and whether its caller has been answered.
 * One object per call, where a promise executor, a timeout callback and a deadline record were three.
 *
 * `done` (the deadline's field) is also whether the caller has been answered: an answer in time sets it, which is
 * what cancels the deadline (the queue drops a done entry unfired), and the queue sets it when the deadline fires
 * first. The queue may hold an answered call a little while before dropping it, so an answer lets go of what only
 * the caller needed (the input, the settling functions).
 */
class GuardedCall<T, A> implements Deadline {
  at = 0;
  done = false;
  resolve: (value: T) => void = noop;
  reject: (reason: unknown) => void = noop;

  constructor(
    readonly guard: StoreGuard,
    readonly operation: string,
    public arg: A | undefined,
    readonly onLate: ((result: T, arg: A) => void) | undefined,
  ) {}

  answered(result: T): void {
    // The caller has moved on with a StoreUnavailableError; only `onLate` may still act on this answer.
    if (this.done) {
      this.onLate?.(result, this.arg as A);
      return;
    }
    this.done = true;
    const resolve = this.resolve;
    this.#letGo();
    this.guard.succeeded();
    resolve(result);
  }

  failed(error: unknown): void {
    if (this.done) return;
    this.done = true;
    const reject = this.reject;
    this.#letGo();
    reject(this.guard.rejected(this, error));
  }

  /** The queue marked it done: the caller is told the store timed out. `arg` stays, for a late answer's `onLate`. */
  onExpire(): void {
    this.reject(this.guard.expired(this));
  }

  #letGo(): void {
    this.arg = undefined;
    this.resolve = noop;
    this.reject = noop;
  }
}

const noop = () => {};
const runAlone = <T>(store: Store, run: (store: Store) => Promise<T>): Promise<T> => run(store);

function toOncelyError(storeName: string, operation: string, error: unknown): OncelyError {
  if (isOncelyError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`${storeName} ${operation} failed: ${message}`, { cause: error });
}
