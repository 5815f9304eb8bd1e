/**
 * @module `DeadlineQueue`: many deadlines of one duration on one timer, for store-call timeouts and lease renewals on
 * the hot path.
 */
/** A deadline in a `DeadlineQueue`; pass it back to `cancel`. `onExpire` is called as a method of the deadline. */
export interface Deadline {
  at: number;
  onExpire(): void;
}

/**
 * Many deadlines of one duration on one timer. A store call and a lease renewal each need a deadline on every
 * request; a `setTimeout` apiece (insert into Node's timer lists, clear, a `Timeout` object for the GC) measured
 * a few microseconds per request on the hot path. Here one timer is armed for the oldest pending deadline and
 * re-armed for the next when it fires; cancelling is a `Set` delete and never touches the timer.
 *
 * All deadlines share one duration and are added as time goes on, so insertion order is deadline order. Time is
 * `Date.now()`, so fake timers in tests move it; a wall clock that jumps back is caught (no deadline is ever more
 * than `durationMs` away), one that jumps forward fires the pending deadlines early, as a timeout.
 */
export class DeadlineQueue {
  readonly durationMs: number;
  readonly #pending = new Set<Deadline>();
  #timer: NodeJS.Timeout | undefined;

  constructor(durationMs: number) {
    this.durationMs = durationMs;
  }

  /** Calls `onExpire` once, `durationMs` from now, unless `cancel` comes first. */
  add(onExpire: () => void): Deadline {
    const deadline: Deadline = { at: 0, onExpire };
    this.insert(deadline);
    return deadline;
  }

  /**
   * Adds a deadline object of the caller's own (one that is already made per call, such as a guarded store call),
   * so no object is made for it here: its `onExpire` runs `durationMs` from now, unless `cancel` comes first.
   */
  insert(deadline: Deadline): void {
    deadline.at = Date.now() + this.durationMs;
    this.#pending.add(deadline);
    if (this.#timer === undefined) this.#arm(this.durationMs);
  }

  /** True when the deadline was still pending (it will not fire now). */
  cancel(deadline: Deadline): boolean {
    return this.#pending.delete(deadline);
  }

  get size(): number {
    return this.#pending.size;
  }

  #arm(delayMs: number): void {
    // A callback that adds a deadline while `#fire` runs has armed one already; keep a single timer.
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#fire(), delayMs);
    // A pending deadline must never keep a process alive that has nothing else to do.
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    const now = Date.now();
    for (const deadline of this.#pending) {
      if (deadline.at > now) {
        // The clock went back: re-base, so nothing waits longer than one duration from here.
        if (deadline.at - now > this.durationMs) deadline.at = now + this.durationMs;
        this.#arm(Math.max(1, deadline.at - now));
        return;
      }
      this.#pending.delete(deadline);
      try {
        deadline.onExpire();
      } catch {
        // One failing callback must not keep the others from firing; callers handle their own errors.
      }
    }
  }
}
