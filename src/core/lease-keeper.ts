import type { Deadline, DeadlineQueue } from './deadline-queue.js';
import { LeaseLostError } from './errors.js';
import type { EventHandler } from './events.js';
import type { StoreGuard } from './guarded-store.js';

export interface LeaseKeeperOptions {
  readonly key: string;
  readonly token: number;
  readonly leaseMs: number;
  readonly guard: StoreGuard;
  readonly emit: EventHandler;
  /** The engine's shared renewal timer for this lease length: its duration is `leaseMs / 3`. */
  readonly renewals: DeadlineQueue;
}

/**
 * Keeps a claim alive while user code runs: renews the lease every `leaseMs / 3`, and aborts `signal` with a
 * `LeaseLostError` when the store reports the claim fenced, or when no renewal succeeded for a whole lease (the
 * store may have let another caller take over, so the code must not assume it still owns the key). Renewals are
 * due on a timer shared by every claim of the same lease length, not a `setTimeout` per claim.
 */
export class LeaseKeeper {
  // Made on first use of `signal`: an AbortController costs microseconds per request, and most code never reads it.
  #controller: AbortController | undefined;
  #lostWith: LeaseLostError | undefined;
  readonly #options: LeaseKeeperOptions;
  #due: Deadline | undefined;
  #confirmedAt = Date.now();
  #stopped = false;

  constructor(options: LeaseKeeperOptions) {
    this.#options = options;
    this.#schedule();
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#lostWith !== undefined) this.#controller.abort(this.#lostWith);
    }
    return this.#controller.signal;
  }

  /** True when the claim was lost while the code ran. */
  get lost(): boolean {
    return this.#lostWith !== undefined;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#due !== undefined) this.#options.renewals.cancel(this.#due);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#due = this.#options.renewals.add(() => void this.#renew());
  }

  async #renew(): Promise<void> {
    const { key, token, leaseMs, guard, emit } = this.#options;
    const startedAt = Date.now();
    try {
      const result = await guard.call('renew', (store) => store.renew({ key, token, leaseMs }));
      if (this.#stopped) return;
      if (result.kind === 'fenced') {
        emit({ type: 'fenced', key, token, operation: 'renew' });
        return this.#lose();
      }
      this.#confirmedAt = startedAt;
    } catch {
      if (this.#stopped) return;
      if (Date.now() - this.#confirmedAt >= leaseMs) return this.#lose();
    }
    this.#schedule();
  }

  #lose(): void {
    const { key, token, emit } = this.#options;
    this.stop();
    emit({ type: 'leaseLost', key, token });
    this.#lostWith = new LeaseLostError(token);
    this.#controller?.abort(this.#lostWith);
  }
}
