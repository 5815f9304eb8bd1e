export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. Default 5. */
  readonly failureThreshold?: number;
  /** How long the circuit stays open before one trial call is let through. Default 5,000 ms. */
  readonly cooldownMs?: number;
}

/**
 * Stops hammering a dead store: after `failureThreshold` consecutive failures every call fails at once for
 * `cooldownMs`; then one trial call goes through (half-open) and its result closes or reopens the circuit.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #cooldownMs: number;
  readonly #now: () => number;
  #failures = 0;
  #openUntil = 0;
  #trialInFlight = false;

  constructor(options: CircuitBreakerOptions = {}, now: () => number = Date.now) {
    this.#threshold = options.failureThreshold ?? 5;
    this.#cooldownMs = options.cooldownMs ?? 5_000;
    this.#now = now;
  }

  get state(): 'closed' | 'open' | 'halfOpen' {
    if (this.#failures < this.#threshold) return 'closed';
    return this.#now() < this.#openUntil ? 'open' : 'halfOpen';
  }

  /** True when a call may go to the store now. */
  tryAcquire(): boolean {
    const state = this.state;
    if (state === 'closed') return true;
    if (state === 'open' || this.#trialInFlight) return false;
    this.#trialInFlight = true;
    return true;
  }

  onSuccess(): void {
    this.#failures = 0;
    this.#trialInFlight = false;
  }

  onFailure(): void {
    this.#failures += 1;
    this.#trialInFlight = false;
    if (this.#failures >= this.#threshold) this.#openUntil = this.#now() + this.#cooldownMs;
  }
}
