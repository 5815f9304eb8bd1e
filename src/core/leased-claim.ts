/**
 * @module The claim on a plain store: its lease kept alive while the code runs, `complete` and `release` fenced by
 * the token in the store, and completing retried because the effect already happened.
 */
// This file's declarations use AbortSignal: the directive, kept in its .d.ts, loads it from @types/node for Node
// projects without the DOM lib whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />
import type { Claim, CompleteOptions } from './claim.js';
import type { DeadlineQueue } from './deadline-queue.js';
import { wanted } from './emit.js';
import type { EngineParts } from './engine-parts.js';
import { ClaimSettledError, isStoreUnavailableError, LeaseLostError } from './errors.js';
import type { ReleaseReason } from './events.js';
import { type ExecutionProbe, NO_EXECUTION, reporter } from './instrumentation.js';
import { type LeaseHolder, LeaseKeeper } from './lease-keeper.js';
import { type Outcome, seal } from './record.js';
import type { CompleteInput, Store, StoredOutcome, TransitionResult } from './store.js';

const completeOn = (store: Store, input: CompleteInput): Promise<TransitionResult> => store.complete(input);

// Completing is the one call that must not give up easily: the effect already happened.
const COMPLETE_RETRY_DELAYS_MS = [25, 100, 400];

/** What the store answered the claim's `begin` with. */
export interface Granted {
  readonly token: number;
  readonly attempt: number;
  readonly takeover: boolean;
}

/**
 * A claim on a plain store: its lease kept alive while the code runs (it is its own `LeaseKeeper`, and so its own
 * entry in the engine's renewal queue: one object per claim), and `complete` and `release` fenced by the token in
 * the store.
 */
export class LeasedClaim extends LeaseKeeper implements Claim {
  readonly attempt: number;
  readonly takeover: boolean;
  readonly #parts: EngineParts;
  readonly #retentionMs: number;
  readonly #probe: ExecutionProbe;
  #settled = false;

  /**
   * The claim `granted` to `holder` (the request, as `begin` got it), its outcome kept `retentionMs` unless
   * `complete` says otherwise; its lease as `LeaseKeeper` keeps it. Made from the objects `begin` has at hand, so
   * the claim is the one object it makes.
   */
  constructor(
    parts: EngineParts,
    holder: LeaseHolder,
    granted: Granted,
    retentionMs: number,
    leaseMs: number,
    sentAt: number,
    renewals: DeadlineQueue,
    probe: ExecutionProbe = NO_EXECUTION,
  ) {
    super(holder, granted.token, leaseMs, sentAt, renewals, parts.guard, reporter(parts.emit, probe), probe);
    this.attempt = granted.attempt;
    this.takeover = granted.takeover;
    this.#parts = parts;
    this.#retentionMs = retentionMs;
    this.#probe = probe;
  }

  get settled(): boolean {
    return this.#settled;
  }

  get transaction(): undefined {
    return undefined;
  }

  complete(outcome: Outcome, options?: CompleteOptions): Promise<void> {
    try {
      this.#settle('complete');
    } catch (error) {
      return Promise.reject(error);
    }
    // Promise chains rather than async functions: this runs on every new request, and each async frame and await
    // is a promise and a tick more for the common case, which is one store call that succeeds.
    let stored: Promise<void>;
    try {
      const sealed = seal(this.key, outcome, this.#parts.envelope);
      const retentionMs = options?.retentionMs ?? this.#retentionMs;
      stored =
        sealed instanceof Promise
          ? sealed.then((inline) => this.#attempt(inline, retentionMs, 0))
          : this.#attempt(sealed, retentionMs, 0);
    } catch (error) {
      stored = Promise.reject(error);
    }
    const probe = this.#probe;
    if (probe === NO_EXECUTION) return stored;
    return stored.then(
      () => probe.end(),
      (error: unknown) => {
        probe.end(error);
        throw error;
      },
    );
  }

  /** One attempt to store the outcome; `retry` counts the attempts that failed before it. */
  #attempt(outcome: StoredOutcome, retentionMs: number, retry: number): Promise<void> {
    const { key, token } = this;
    const guard = this.#parts.guard;
    const probe = this.#probe;
    const input: CompleteInput = { key, token, outcome, retentionMs };
    // Without instrumentation the store call is made directly, as the engine's `begin` is: no closure for a probe
    // that would only call it.
    return (
      probe === NO_EXECUTION
        ? guard.callWith('complete', completeOn, input)
        : probe.store('complete', () => guard.callWith('complete', completeOn, input))
    ).then(
      (result) => (result.kind === 'fenced' ? this.#fenced(outcome, retentionMs, retry) : this.#completed()),
      (error: unknown) => this.#retry(error, outcome, retentionMs, retry),
    );
  }

  #completed(): void {
    if (wanted(this.emit, 'completed'))
      this.emit({ type: 'completed', key: this.key, token: this.token }, this.scope);
  }

  /** A failed attempt: the store may come back, and the effect already happened, so try again a few times. */
  #retry(error: unknown, outcome: StoredOutcome, retentionMs: number, retry: number): Promise<void> {
    const delay = COMPLETE_RETRY_DELAYS_MS[retry];
    if (!isStoreUnavailableError(error) || error.outcomeStored || delay === undefined)
      return Promise.reject(error);
    return new Promise((resolve) => setTimeout(resolve, delay)).then(() =>
      this.#attempt(outcome, retentionMs, retry + 1),
    );
  }

  /** The store refused the token: lost, unless an earlier attempt of ours went through and its reply was lost. */
  async #fenced(outcome: StoredOutcome, retentionMs: number, retry: number): Promise<void> {
    const { key, token } = this;
    if (retry > 0) {
      let ours: boolean;
      try {
        ours = await this.#completedByUs();
      } catch (error) {
        return this.#retry(error, outcome, retentionMs, retry);
      }
      if (ours) return this.emit({ type: 'completed', key, token }, this.scope);
    }
    this.emit({ type: 'fenced', key, token, operation: 'complete' }, this.scope);
    throw new LeaseLostError(token);
  }

  async release(reason: ReleaseReason = 'notKept'): Promise<void> {
    this.#settle('release');
    await releaseFenced(this.#parts, this.key, this.token, reason, this.#probe, this.scope);
    this.#probe.end();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.#settled) await this.release('disposed');
  }

  #settle(attempted: 'complete' | 'release'): void {
    if (this.#settled) throw new ClaimSettledError(this.token, attempted);
    this.#settled = true;
    this.stopKeeping();
  }

  /** True when the record is completed under this claim's token: an earlier attempt of ours stored it. */
  async #completedByUs(): Promise<boolean> {
    const record = await this.#probe.store('get', () =>
      this.#parts.guard.call('get', (store) => store.get(this.key)),
    );
    return record?.state === 'completed' && record.token === this.token;
  }
}

/**
 * Gives a key up if `token` still holds it. Never rejects: a release that cannot reach the store leaves the key
 * to be taken over when its lease ends, and nothing is lost by waiting.
 */
export async function releaseFenced(
  parts: EngineParts,
  key: string,
  token: number,
  reason: ReleaseReason,
  probe: ExecutionProbe = NO_EXECUTION,
  scope?: string,
): Promise<void> {
  const emit = reporter(parts.emit, probe);
  try {
    const result = await probe.store('release', () =>
      parts.guard.call('release', (store) => store.release({ key, token })),
    );
    if (result.kind === 'fenced') emit({ type: 'fenced', key, token, operation: 'release' }, scope);
    else if (wanted(emit, 'released')) emit({ type: 'released', key, token, reason }, scope);
  } catch {
    // See above: the lease ends on its own.
  }
}
