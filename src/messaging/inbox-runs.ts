/**
 * @module The inbox's count of runs started, for transactional mode. A crash there rolls the message's claim back
 * with everything else, so the message key's own attempt never rises; each run therefore also claims a second
 * record (`inbox-runs`), outside the transaction, through an engine of its own. That record's attempt rises on each
 * run after a crash (lease takeover) or an error (release), exactly like the message key's in plain mode.
 */
import type { Claim } from '../core/claim.js';
import { Engine, type EngineOptions } from '../core/engine.js';
import type { EventHandler } from '../core/events.js';
import { scopedKey } from '../core/key.js';
import type { Store } from '../core/store.js';

/** What the runs record says before the message runs: the run is counted (its claim held), or another holds it. */
export type RunCount =
  | { readonly kind: 'counted'; readonly attempt: number; readonly claim: Claim | undefined }
  | { readonly kind: 'busy'; readonly retryAfterMs: number };

export interface RunCounterOptions {
  /** The inbox's scope, for the record's label and diagnostics. */
  readonly scope: string;
  /** The inbox engine's, resolved. */
  readonly leaseMs: number;
  readonly retentionMs: number;
  /** As the inbox was given them. */
  readonly engineOptions: Pick<EngineOptions, 'storeTimeoutMs' | 'encryption' | 'onEvent'>;
}

// A finished message needs no count: the record is kept for 1 ms, which every store reads as gone (as a delete
// did before), in the same one fenced step that ends the claim.
const FINISHED = { status: 0, headers: [], body: new Uint8Array(0) };
const GONE_AT_ONCE = { retentionMs: 1 };

export class RunCounter {
  readonly #engine: Engine;
  readonly #leaseMs: number;
  readonly #scope: string;

  constructor(store: Store, options: RunCounterOptions) {
    const { scope, leaseMs, retentionMs, engineOptions } = options;
    const { storeTimeoutMs, encryption, onEvent } = engineOptions;
    this.#engine = new Engine({
      leaseMs,
      retentionMs,
      ...(storeTimeoutMs === undefined ? {} : { storeTimeoutMs }),
      // Every record the inbox writes is sealed alike.
      ...(encryption === undefined ? {} : { encryption }),
      // The plain store: a claim here must outlive a crash, so it is never one of a transaction.
      store: plainView(store),
      // The claim of the message's own key, which follows, goes through the inbox engine's breaker.
      breaker: false,
      // The record is the inbox's bookkeeping: its failures are reported, its claims are not the message's.
      ...storeErrorsOf(onEvent),
    });
    this.#leaseMs = leaseMs;
    this.#scope = `inbox-runs:${scope}`;
  }

  /**
   * Claims the runs record of `key`. Rejects with `StoreUnavailableError` when the store fails or is slower than
   * `storeTimeoutMs` (a claim that answers after that is given back at once, by the engine).
   */
  async count(key: string, leaseUntil: number | undefined): Promise<RunCount> {
    // The record's lease is never renewed past one lease from now: a handler that hangs past it lets the next
    // delivery take the record over and count a run, as a crash would.
    const now = Date.now();
    const until = Math.min(now + this.#leaseMs, leaseUntil ?? Number.POSITIVE_INFINITY);
    const begun = await this.#engine.begin({
      key: runsKeyOf(key),
      fingerprint: 'runs',
      scope: this.#scope,
      leaseUntil: until,
    });
    if (begun.kind === 'acquired')
      return { kind: 'counted', attempt: begun.claim.attempt, claim: begun.claim };
    if (begun.kind === 'inProgress') return { kind: 'busy', retryAfterMs: begun.retryAfterMs };
    // Finished a moment ago (or a foreign record): this run is the first counted.
    return { kind: 'counted', attempt: 1, claim: undefined };
  }

  /**
   * Ends a run: the record goes once the message is finished, is released otherwise (the next run counts one
   * more). Never rejects: a failure is reported as a `storeError` event, and a record left claimed only makes the
   * next delivery wait for its lease.
   */
  async end(claim: Claim, finished: boolean): Promise<void> {
    try {
      await (finished ? claim.complete(FINISHED, GONE_AT_ONCE) : claim.release('error'));
    } catch {
      // See above.
    }
  }
}

/** The runs record's key of a message key. */
export function runsKeyOf(key: string): string {
  return scopedKey('inbox-runs', key);
}

function storeErrorsOf(onEvent: EventHandler | undefined): { onEvent?: EventHandler } {
  if (onEvent === undefined) return {};
  return {
    onEvent: (event) => {
      if (event.type === 'storeError') onEvent(event);
    },
  };
}

/** The store without transactional mode: the same record, claimed in autocommit. */
function plainView(store: Store): Store {
  return {
    name: store.name,
    begin: (input) => store.begin(input),
    complete: (input) => store.complete(input),
    release: (input) => store.release(input),
    renew: (input) => store.renew(input),
    get: (key) => store.get(key),
    delete: (key) => store.delete(key),
  };
}
