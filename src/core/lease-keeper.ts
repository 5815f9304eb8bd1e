/**
 * @module `LeaseKeeper`: a claim's lease renewed while user code runs, and its loss told on time through `signal`.
 * The base of the claim on a plain store (`LeasedClaim`), so a claim is one object: its lease, and its entry in the
 * engine's renewal queue.
 */
import type { Deadline, DeadlineQueue } from './deadline-queue.js';
import type { Emit } from './emit.js';
import { LeaseLostError } from './errors.js';
import type { StoreGuard } from './guarded-store.js';
import type { ExecutionProbe } from './instrumentation.js';

/** Whose lease is kept: the request as `begin` got it. */
export interface LeaseHolder {
  readonly key: string;
  /** The caller's scope (a route, a function), for the diagnostics messages. */
  readonly scope?: string | undefined;
  /** The caller's own end (`BeginRequest.leaseUntil`): no lease, first or renewed, reaches past it. */
  readonly leaseUntil?: number | undefined;
}

/**
 * Keeps a claim alive while user code runs, and makes sure the code hears of a lost claim on time.
 *
 * The lease is renewed every `leaseMs / 3` on a timer shared by every claim of the same lease length (`renewals`,
 * in which the keeper is its own entry: it is the `Deadline`). The claim's local deadline is `sentAt + leaseMs` of
 * the last `begin` or renewal the store confirmed: the store started that lease no earlier than the request was
 * sent, so nobody can take the key over before this deadline. `signal` aborts with a `LeaseLostError` when a renewal
 * is fenced, and at the deadline itself unless a renewal moved it, whatever the network does (a renewal that hangs in
 * a silent network is no excuse). With `leaseUntil` (a caller that cannot outlive a known time, such as a Lambda
 * invocation) no lease asked for, first or renewed, reaches past it: a caller killed there leaves a key that can be
 * taken over at once.
 */
export class LeaseKeeper implements Deadline {
  readonly key: string;
  readonly token: number;
  /** When the next renewal is due, and whether none is (the renewal queue's fields). */
  at = 0;
  done = false;
  // Made on first use of `signal`: an AbortController costs microseconds per request, and most code never reads it.
  #controller: AbortController | undefined;
  #lostWith: LeaseLostError | undefined;
  readonly #scope: string | undefined;
  readonly #leaseMs: number;
  readonly #until: number | undefined;
  readonly #guard: StoreGuard;
  readonly #emit: Emit;
  readonly #probe: ExecutionProbe;
  readonly #renewals: DeadlineQueue;
  #deadline: number;
  // Armed at the first renewal: a request that ends within a third of its lease never pays for a timer.
  #watchdog: NodeJS.Timeout | undefined;
  #stopped = false;

  /**
   * The lease of `holder`'s claim under `token`: `leaseMs` (uncapped) renewed on `renewals` (whose duration is
   * `leaseMs / 3`), the first one asked for by a `begin` sent at `sentAt`. Renewals are store calls of the
   * execution's `probe`, through `guard`, reported by `emit`. Arguments rather than an options object: a claim is
   * made on every new request, and this way it is the only object made.
   */
  constructor(
    holder: LeaseHolder,
    token: number,
    leaseMs: number,
    sentAt: number,
    renewals: DeadlineQueue,
    guard: StoreGuard,
    emit: Emit,
    probe: ExecutionProbe,
  ) {
    this.key = holder.key;
    this.token = token;
    this.#scope = holder.scope;
    this.#until = holder.leaseUntil;
    this.#leaseMs = leaseMs;
    this.#guard = guard;
    this.#emit = emit;
    this.#probe = probe;
    this.#renewals = renewals;
    this.#deadline = sentAt + this.#leaseFrom(sentAt);
    renewals.insert(this);
    // A capped lease may end before the first renewal, which is what arms the watchdog otherwise.
    if (this.#until !== undefined && this.#deadline <= Date.now() + renewals.durationMs) this.#watch();
  }

  /** Local time (ms since the epoch) by which the claim is given up unless a renewal extends it. */
  get deadline(): number {
    return this.#deadline;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#lostWith !== undefined) this.#controller.abort(this.#lostWith);
    }
    return this.#controller.signal;
  }

  /** The scope the claim was made for, for its events. */
  protected get scope(): string | undefined {
    return this.#scope;
  }

  /** Where the claim's events go (the engine's emitter, and the execution's probe). */
  protected get emit(): Emit {
    return this.#emit;
  }

  /** Stops renewing (the claim is settled, or lost). */
  protected stopKeeping(): void {
    this.#stopped = true;
    // Cancels the pending renewal: the queue drops a done entry unfired.
    this.done = true;
    if (this.#watchdog !== undefined) clearTimeout(this.#watchdog);
  }

  /** The renewal queue's callback: a third of the lease has passed since the last renewal. */
  onExpire(): void {
    void this.#renew();
  }

  #watch(): void {
    if (this.#stopped) return;
    const left = this.#deadline - Date.now();
    if (left <= 0) {
      this.#lose();
      return;
    }
    if (this.#watchdog !== undefined) clearTimeout(this.#watchdog);
    this.#watchdog = setTimeout(() => this.#watch(), left);
    this.#watchdog.unref();
  }

  async #renew(): Promise<void> {
    const { key, token } = this;
    if (this.#watchdog === undefined) this.#watch();
    const sentAt = Date.now();
    const leaseMs = this.#leaseFrom(sentAt);
    // At the caller's end there is nothing left to renew: the watchdog gives the claim up at the deadline.
    if (leaseMs <= 0) return;
    try {
      const result = await this.#probe.store('renew', () =>
        this.#guard.call('renew', (store) => store.renew({ key, token, leaseMs })),
      );
      if (this.#stopped) return;
      if (result.kind === 'fenced') {
        this.#emit({ type: 'fenced', key, token, operation: 'renew' }, this.#scope);
        return this.#lose();
      }
      if (sentAt + leaseMs > this.#deadline) this.#deadline = sentAt + leaseMs;
    } catch {
      // The watchdog gives the claim up at the deadline; until then the next renewal may still get through.
    }
    if (!this.#stopped) this.#renewals.insert(this);
  }

  /** The lease a call sent at `sentAt` asks for: `leaseMs`, cut short at `until`. */
  #leaseFrom(sentAt: number): number {
    const until = this.#until;
    return until === undefined ? this.#leaseMs : Math.min(this.#leaseMs, Math.floor(until - sentAt));
  }

  #lose(): void {
    if (this.#lostWith !== undefined) return;
    const { key, token } = this;
    this.stopKeeping();
    this.#emit({ type: 'leaseLost', key, token }, this.#scope);
    this.#lostWith = new LeaseLostError(token);
    this.#controller?.abort(this.#lostWith);
  }
}
