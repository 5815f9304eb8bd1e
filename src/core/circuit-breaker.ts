/**
 * @module The circuit breaker around the store: after a run of failures, calls fail fast and one probe at a time finds
 * the store back.
 */
export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. Default 5. */
  readonly failureThreshold?: number;
  /**
   * While open, one probe call goes to the store this often; the first probe that succeeds closes the circuit,
   * so traffic resumes within one interval of the store answering again. Default 250 ms.
   */
  readonly probeIntervalMs?: number;
}

/**
 * Stops hammering a dead store without waiting out a fixed cooldown once it is back: after `failureThreshold`
 * consecutive failures every call fails at once, except one probe per `probeIntervalMs` (half-open), whose
 * success closes the circuit. A probe costs one store call per interval, however much traffic is shed.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #probeIntervalMs: number;
  readonly #now: () => number;
  #failures = 0;
  #nextProbeAt = 0;
  #probing = false;

  constructor(options: CircuitBreakerOptions = {}, now: () => number = Date.now) {
    this.#threshold = options.failureThreshold ?? 5;
    this.#probeIntervalMs = options.probeIntervalMs ?? 250;
    this.#now = now;
  }

  get state(): 'closed' | 'open' | 'halfOpen' {
    if (this.#failures < this.#threshold) return 'closed';
    return this.#probing ? 'halfOpen' : 'open';
  }

  /** True when a call may go to the store now: always while closed, one probe per interval while open. */
  tryAcquire(): boolean {
    if (this.#failures < this.#threshold) return true;
    const now = this.#now();
    // A probe whose answer never came (the guard's timeout reports it as a failure) must not block later ones.
    if (now < this.#nextProbeAt) return false;
    this.#probing = true;
    this.#nextProbeAt = now + this.#probeIntervalMs;
    return true;
  }

  onSuccess(): void {
    this.#failures = 0;
    this.#probing = false;
  }

  onFailure(): void {
    this.#failures += 1;
    this.#probing = false;
    if (this.#failures === this.#threshold) this.#nextProbeAt = this.#now() + this.#probeIntervalMs;
  }
}
