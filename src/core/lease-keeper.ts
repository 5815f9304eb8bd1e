/**
 * @module `LeaseKeeper`: a claim's lease renewed while user code runs, and its loss told on time through `signal`.
 */
import type { Deadline, DeadlineQueue } from './deadline-queue.js';
import type { Emit } from './emit.js';
import { LeaseLostError } from './errors.js';
import type { StoreGuard } from './guarded-store.js';
import type { ExecutionProbe } from './instrumentation.js';

export interface LeaseKeeperOptions {
  readonly key: string;
  /** The caller's scope (a route, a function), for the diagnostics messages. */
  readonly scope?: string | undefined;
  readonly token: number;
  readonly leaseMs: number;
  /** The caller's own end (`BeginRequest.leaseUntil`): no lease, first or renewed, reaches past it. */
  readonly until?: number | undefined;
  /** When the `begin` that granted the claim was sent: the store's lease cannot have started earlier. */
  readonly sentAt: number;
  readonly guard: StoreGuard;
  readonly emit: Emit;
  /** The execution's probe: renewals are store calls of the execution. */
  readonly probe: ExecutionProbe;
  /** The engine's shared renewal timer for this lease length: its duration is `leaseMs / 3`. */
  readonly renewals: DeadlineQueue;
}

/**
 * Keeps a claim alive while user code runs, and makes sure the code hears of a lost claim on time.
 *
 * The lease is renewed every `leaseMs / 3` on a timer shared by every claim of the same lease length. The
 * claim's local deadline is `sentAt + leaseMs` of the last `begin` or renewal the store confirmed: the store
 * started that lease no earlier than the request was sent, so nobody can take the key over before this
 * deadline. `signal` aborts with a `LeaseLostError` when a renewal is fenced, and at the deadline itself unless
 * a renewal moved it, whatever the network does (a renewal that hangs in a silent network is no excuse).
 * With `until` (a caller that cannot outlive a known time, such as a Lambda invocation) no lease asked for, first
 * or renewed, reaches past it: a caller killed there leaves a key that can be taken over at once.
 */
export class LeaseKeeper {
  // Made on first use of `signal`: an AbortController costs microseconds per request, and most code never reads it.
  #controller: AbortController | undefined;
  #lostWith: LeaseLostError | undefined;
  readonly #options: LeaseKeeperOptions;
  #due: Deadline | undefined;
  #deadline: number;
  // Armed at the first renewal: a request that ends within a third of its lease never pays for a timer.
  #watchdog: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: LeaseKeeperOptions) {
    this.#options = options;
    this.#deadline = options.sentAt + this.#leaseFrom(options.sentAt);
    this.#schedule();
    // A capped lease may end before the first renewal, which is what arms the watchdog otherwise.
    if (options.until !== undefined && this.#deadline <= Date.now() + options.renewals.durationMs)
      this.#watch();
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

  stop(): void {
    this.#stopped = true;
    if (this.#due !== undefined) this.#options.renewals.cancel(this.#due);
    if (this.#watchdog !== undefined) clearTimeout(this.#watchdog);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#due = this.#options.renewals.add(() => void this.#renew());
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
    const { key, scope, token, guard, emit, probe } = this.#options;
    if (this.#watchdog === undefined) this.#watch();
    const sentAt = Date.now();
    const leaseMs = this.#leaseFrom(sentAt);
    // At the caller's end there is nothing left to renew: the watchdog gives the claim up at the deadline.
    if (leaseMs <= 0) return;
    try {
      const result = await probe.store('renew', () =>
        guard.call('renew', (store) => store.renew({ key, token, leaseMs })),
      );
      if (this.#stopped) return;
      if (result.kind === 'fenced') {
        emit({ type: 'fenced', key, token, operation: 'renew' }, scope);
        return this.#lose();
      }
      if (sentAt + leaseMs > this.#deadline) this.#deadline = sentAt + leaseMs;
    } catch {
      // The watchdog gives the claim up at the deadline; until then the next renewal may still get through.
    }
    this.#schedule();
  }

  /** The lease a call sent at `sentAt` asks for: `leaseMs`, cut short at `until`. */
  #leaseFrom(sentAt: number): number {
    const { leaseMs, until } = this.#options;
    return until === undefined ? leaseMs : Math.min(leaseMs, Math.floor(until - sentAt));
  }

  #lose(): void {
    if (this.#lostWith !== undefined) return;
    const { key, scope, token, emit } = this.#options;
    this.stop();
    emit({ type: 'leaseLost', key, token }, scope);
    this.#lostWith = new LeaseLostError(token);
    this.#controller?.abort(this.#lostWith);
  }
}
