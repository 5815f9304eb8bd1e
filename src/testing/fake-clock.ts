/**
 * @module `FakeClock`, the conformance suite's hand-moved clock: stores read time from it, so lease and retention
 * expiry are tested without sleeping.
 */
/** A clock the conformance suite moves by hand, so lease and retention expiry need no sleeps. */
export class FakeClock {
  #now: number;

  // Starts at the real time so fencing tokens (which follow the clock) look like a store's own.
  constructor(start: number = Date.now()) {
    this.#now = start;
  }

  readonly now = (): number => this.#now;

  advance(ms: number): void {
    this.#now += ms;
  }
}
