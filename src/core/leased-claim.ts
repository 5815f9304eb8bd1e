// This file's declarations use AbortSignal: the directive, kept in its .d.ts, loads it from @types/node for Node
// projects without the DOM lib whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />
import type { Claim, CompleteOptions } from './claim.js';
import { type EngineParts, seal } from './engine-parts.js';
import { ClaimSettledError, isStoreUnavailableError, LeaseLostError } from './errors.js';
import type { EventHandler, ReleaseReason } from './events.js';
import { type ExecutionProbe, NO_EXECUTION, reporter } from './instrumentation.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { Outcome } from './record.js';

// Completing is the one call that must not give up easily: the effect already happened.
const COMPLETE_RETRY_DELAYS_MS = [25, 100, 400];

/**
 * A claim on a plain store: its lease is kept alive by a `LeaseKeeper` while the code runs, and `complete` and
 * `release` are fenced by the token in the store.
 */
export class LeasedClaim implements Claim {
  readonly #parts: EngineParts;
  readonly #keeper: LeaseKeeper;
  readonly #retentionMs: number;
  readonly #probe: ExecutionProbe;
  readonly #emit: EventHandler;
  #settled = false;

  constructor(
    parts: EngineParts,
    readonly key: string,
    readonly token: number,
    readonly attempt: number,
    readonly takeover: boolean,
    keeper: LeaseKeeper,
    retentionMs: number,
    probe: ExecutionProbe = NO_EXECUTION,
  ) {
    this.#parts = parts;
    this.#keeper = keeper;
    this.#retentionMs = retentionMs;
    this.#probe = probe;
    this.#emit = reporter(parts.emit, probe);
  }

  get signal(): AbortSignal {
    return this.#keeper.signal;
  }

  get deadline(): number {
    return this.#keeper.deadline;
  }

  get settled(): boolean {
    return this.#settled;
  }

  get transaction(): undefined {
    return undefined;
  }

  async complete(outcome: Outcome, options?: CompleteOptions): Promise<void> {
    this.#settle('complete');
    try {
      await this.#complete(outcome, options);
    } catch (error) {
      this.#probe.end(error);
      throw error;
    }
    this.#probe.end();
  }

  async #complete(outcome: Outcome, options: CompleteOptions | undefined): Promise<void> {
    const { key, token } = this;
    const stored = await seal(this.#parts, key, outcome);
    const retentionMs = options?.retentionMs ?? this.#retentionMs;
    const guard = this.#parts.guard;
    const emit = this.#emit;
    let unsure = false;
    for (let retry = 0; ; retry++) {
      try {
        const result = await this.#probe.store('complete', () =>
          guard.call('complete', (store) => store.complete({ key, token, outcome: stored, retentionMs })),
        );
        // After a failed attempt, "fenced" may only mean that attempt went through and its reply was lost.
        if (result.kind === 'fenced' && !(unsure && (await this.#completedByUs()))) {
          emit({ type: 'fenced', key, token, operation: 'complete' });
          throw new LeaseLostError(token);
        }
        emit({ type: 'completed', key, token });
        return;
      } catch (error) {
        const delay = COMPLETE_RETRY_DELAYS_MS[retry];
        if (!isStoreUnavailableError(error) || error.outcomeStored || delay === undefined) throw error;
        unsure = true;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async release(reason: ReleaseReason = 'notKept'): Promise<void> {
    this.#settle('release');
    await releaseFenced(this.#parts, this.key, this.token, reason, this.#probe);
    this.#probe.end();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.#settled) await this.release('disposed');
  }

  #settle(attempted: 'complete' | 'release'): void {
    if (this.#settled) throw new ClaimSettledError(this.token, attempted);
    this.#settled = true;
    this.#keeper.stop();
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
): Promise<void> {
  const emit = reporter(parts.emit, probe);
  try {
    const result = await probe.store('release', () =>
      parts.guard.call('release', (store) => store.release({ key, token })),
    );
    if (result.kind === 'fenced') emit({ type: 'fenced', key, token, operation: 'release' });
    else emit({ type: 'released', key, token, reason });
  } catch {
    // See above: the lease ends on its own.
  }
}
