/**
 * @module `DeadlineQueue`: many deadlines of one duration on one timer, for store-call timeouts and lease renewals on
 * the hot path.
 */
/**
 * A deadline in a `DeadlineQueue`: usually an object the owner makes anyway (a guarded store call, a claim), so
 * arming one makes nothing. `at` and `done` are the queue's fields; `onExpire` is called as a method of the deadline.
 */
export interface Deadline {
  at: number;
  /**
   * False while the deadline waits. The queue sets it before calling `onExpire`; the owner sets it to cancel the
   * deadline (a store call answered, a claim settled): a write to its own object rather than a call into the
   * queue, and the queue drops the entry unfired when it reaches it.
   */
  done: boolean;
  onExpire(): void;
}

/** Below this many entries held, cancelled ones are never swept out before they reach the front. */
const SWEEP_MIN = 32;

/**
 * Many deadlines of one duration on one timer. A store call and a lease renewal each need a deadline on every
 * request; a `setTimeout` apiece (insert into Node's timer lists, clear, a `Timeout` object for the GC) measured
 * a few microseconds per request on the hot path. Here one timer is armed for the oldest pending deadline and
 * re-armed for the next when it fires.
 *
 * Cancelling is lazy: the owner marks its deadline `done` and the queue is not called at all (a request arms three
 * deadlines, its two store calls' and its claim's renewal, and cancels each before it could fire: the cancels were
 * half of its calls into the queue). A cancelled entry
 * is dropped when it reaches the front, or by a sweep once the queue holds twice the entries it kept at the last
 * one (at least `SWEEP_MIN`): so it holds at most about twice its waiting deadlines, each sweep paid for by the
 * inserts since the one before, and a settled claim or call is not kept alive for a whole duration.
 *
 * All deadlines share one duration and are added as time goes on, so insertion order is deadline order. Time is
 * `Date.now()`, so fake timers in tests move it; a wall clock that jumps back is caught (no deadline is ever more
 * than `durationMs` away), one that jumps forward fires the pending deadlines early, as a timeout.
 */
export class DeadlineQueue {
  readonly durationMs: number;
  /** Entries in insertion (= deadline) order from `#first`; the slots before it have fired or been dropped. */
  readonly #entries: (Deadline | undefined)[] = [];
  #first = 0;
  #sweepAt = SWEEP_MIN;
  #timer: NodeJS.Timeout | undefined;

  constructor(durationMs: number) {
    this.durationMs = durationMs;
  }

  /** Calls `onExpire` once, `durationMs` from now, unless the deadline is marked `done` first. */
  add(onExpire: () => void): Deadline {
    const deadline: Deadline = { at: 0, done: false, onExpire };
    this.insert(deadline);
    return deadline;
  }

  /**
   * Arms a deadline object of the caller's own (one that is already made per call, such as a guarded store call),
   * so no object is made for it here: its `onExpire` runs `durationMs` from now, unless it is marked `done` first.
   * The deadline must not be waiting in the queue already: a new one, or one whose `onExpire` has run.
   */
  insert(deadline: Deadline): void {
    deadline.at = Date.now() + this.durationMs;
    deadline.done = false;
    const entries = this.#entries;
    entries.push(deadline);
    if (entries.length >= this.#sweepAt) this.#sweep();
    if (this.#timer === undefined) this.#arm(this.durationMs);
  }

  /** The entries held: the deadlines waiting, and cancelled ones not yet dropped. */
  get size(): number {
    return this.#entries.length - this.#first;
  }

  /** Drops the cancelled entries, keeping the order of the others. */
  #sweep(): void {
    const entries = this.#entries;
    let kept = 0;
    for (let index = this.#first; index < entries.length; index++) {
      const deadline = entries[index]!;
      if (!deadline.done) entries[kept++] = deadline;
    }
    entries.length = kept;
    this.#first = 0;
    this.#sweepAt = Math.max(SWEEP_MIN, 2 * kept);
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
    const entries = this.#entries;
    const now = Date.now();
    while (this.#first < entries.length) {
      const deadline = entries[this.#first]!;
      if (!deadline.done && deadline.at > now) {
        // The clock went back: re-base, so nothing waits longer than one duration from here.
        if (deadline.at - now > this.durationMs) deadline.at = now + this.durationMs;
        this.#arm(Math.max(1, deadline.at - now));
        return;
      }
      entries[this.#first++] = undefined;
      if (deadline.done) continue;
      deadline.done = true;
      try {
        deadline.onExpire();
      } catch {
        // One failing callback must not keep the others from firing; callers handle their own errors.
      }
    }
    entries.length = 0;
    this.#first = 0;
  }
}
