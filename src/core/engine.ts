// This file's declarations use AbortSignal: the directive, kept in its .d.ts, loads it from @types/node for Node
// projects without the DOM lib whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />
import type { CircuitBreakerOptions } from './circuit-breaker.js';
import { DeadlineQueue } from './deadline-queue.js';
import {
  FingerprintMismatchError,
  InProgressError,
  InvalidOptionsError,
  isStoreUnavailableError,
  LeaseLostError,
} from './errors.js';
import { type EventHandler, emitter } from './events.js';
import { StoreGuard } from './guarded-store.js';
import { LeaseKeeper } from './lease-keeper.js';
import {
  type BlobStore,
  defaultEnvelopeOptions,
  type EnvelopeOptions,
  type OpenedOutcome,
  type Outcome,
  openInline,
  openOutcome,
  sealInline,
  sealOutcome,
} from './record.js';
import type { BeginResult, Store, TransactionResult } from './store.js';
import { knownOptions, wholeNumber } from './validate.js';

export interface EngineOptions {
  /** Where records live. Required. */
  readonly store: Store;
  /** How long a claim holds before another caller may take over. Default 30,000 ms. */
  readonly leaseMs?: number;
  /** How long a completed (or in-progress) record is kept. Default 86,400,000 ms (24 h). */
  readonly retentionMs?: number;
  /** A store call slower than this fails with `StoreUnavailableError`. Default 2,000 ms. */
  readonly storeTimeoutMs?: number;
  /** Circuit breaker around the store; `false` turns it off. Default 5 failures, 5,000 ms cooldown. */
  readonly breaker?: CircuitBreakerOptions | false;
  /** Bodies of at least this many bytes are compressed. Default 1,024 bytes. */
  readonly compressAboveBytes?: number;
  /** Bodies above this many bytes go to `blobStore`, or are not retained. Default 1,048,576 bytes. */
  readonly maxBodyBytes?: number;
  readonly blobStore?: BlobStore;
  /** Receives every engine event (acquired, replayed, conflict, fenced, leaseLost, …). */
  readonly onEvent?: EventHandler;
}

const ENGINE_OPTIONS = [
  'store',
  'leaseMs',
  'retentionMs',
  'storeTimeoutMs',
  'breaker',
  'compressAboveBytes',
  'maxBodyBytes',
  'blobStore',
  'onEvent',
] as const;

/** What user code gets while it owns a key. */
export interface ExecutionContext {
  /** The hashed storage key. */
  readonly key: string;
  /** Fencing token of this claim: pass it to downstream writes so a stale owner's writes can be refused. */
  readonly token: number;
  /** 1 for the first run; higher after a takeover or a release. */
  readonly attempt: number;
  /** True when this claim took the key over from an owner whose lease ran out. */
  readonly takeover: boolean;
  /** Aborted (with a `LeaseLostError`) when the claim is lost while the code runs. */
  readonly signal: AbortSignal;
  /**
   * Transactional mode only (a store with `runInTransaction`, such as `PostgresStore#transactional()`): the open
   * transaction to write through, so the effect commits or rolls back with the key's record. Undefined otherwise.
   */
  readonly transaction?: unknown;
}

/** What to do with a result: store it (optionally with its own retention) or let the key go. */
export type Verdict =
  | { readonly keep: true; readonly outcome: Outcome; readonly retentionMs?: number }
  | { readonly keep: false };

export interface ExecuteRequest<R> {
  /** The hashed storage key (see `scopedKey`). */
  readonly key: string;
  readonly fingerprint: string;
  readonly run: (context: ExecutionContext) => Promise<R>;
  /** Decides whether the result is stored. A thrown error always releases the key. */
  readonly settle: (result: R) => Verdict;
  /** Wait up to this long for a concurrent duplicate to finish instead of failing with `InProgressError`. */
  readonly waitMs?: number;
  readonly leaseMs?: number;
  readonly retentionMs?: number;
}

export type ExecuteResult<R> =
  | {
      readonly kind: 'executed';
      readonly result: R;
      readonly token: number;
      readonly attempt: number;
      readonly stored: boolean;
    }
  | { readonly kind: 'replayed'; readonly outcome: OpenedOutcome; readonly completedAt: number };

// Completing is the one call that must not give up easily: the effect already happened.
const COMPLETE_RETRY_DELAYS_MS = [25, 100, 400];
const POLL_MIN_MS = 10;
const POLL_MAX_MS = 250;

type Busy = Extract<BeginResult, { readonly kind: 'inProgress' | 'mismatch' }>;
const isBusy = (result: { readonly kind: string }): result is Busy =>
  result.kind === 'inProgress' || result.kind === 'mismatch';

/**
 * Drives the state machine of DESIGN §2 over any `Store`: claims the key in one step, runs the user code while
 * renewing the lease, stores the outcome fenced by the token, replays completed outcomes, and fails closed.
 */
export class Engine {
  readonly store: Store;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly #guard: StoreGuard;
  readonly #envelope: EnvelopeOptions;
  readonly #emit: EventHandler;
  readonly #renewals = new Map<number, DeadlineQueue>();

  constructor(options: EngineOptions) {
    if (options === null || typeof options !== 'object')
      throw new InvalidOptionsError('engine options are required');
    knownOptions('engine', options, ENGINE_OPTIONS);
    const { store } = options;
    if (store === null || typeof store !== 'object' || typeof store.begin !== 'function') {
      throw new InvalidOptionsError('a store is required (for example new MemoryStore())');
    }
    this.store = store;
    this.leaseMs = wholeNumber('leaseMs', options.leaseMs, 30_000, { min: 10 });
    this.retentionMs = wholeNumber('retentionMs', options.retentionMs, 86_400_000, { min: 1 });
    const timeoutMs = wholeNumber('storeTimeoutMs', options.storeTimeoutMs, 2_000, { min: 1 });
    this.#envelope = {
      compressAboveBytes: wholeNumber(
        'compressAboveBytes',
        options.compressAboveBytes,
        defaultEnvelopeOptions.compressAboveBytes,
      ),
      maxBodyBytes: wholeNumber('maxBodyBytes', options.maxBodyBytes, defaultEnvelopeOptions.maxBodyBytes),
      blobStore: options.blobStore,
    };
    this.#emit = emitter(options.onEvent);
    this.#guard = new StoreGuard(store, { timeoutMs, breaker: options.breaker ?? {} }, this.#emit);
  }

  async execute<R>(request: ExecuteRequest<R>): Promise<ExecuteResult<R>> {
    const { key } = request;
    const leaseMs = request.leaseMs ?? this.leaseMs;
    const retentionMs = request.retentionMs ?? this.retentionMs;
    if (this.store.runInTransaction !== undefined) {
      return this.#executeInTransaction(request, leaseMs, retentionMs);
    }
    const { fingerprint } = request;
    const begin = () =>
      this.#guard.call('begin', (store) => store.begin({ key, fingerprint, leaseMs, retentionMs }));
    // The first attempt outside `#untilFree`: nearly every request gets its answer from it, and the loop's own
    // promise is a cost paid on each of them.
    const first = await begin();
    const begun = isBusy(first)
      ? await this.#untilFree<Exclude<BeginResult, Busy>>(request, begin, first)
      : first;
    if (begun.kind === 'replay') return this.#replayed(key, begun);
    const { token, attempt, takeover } = begun;
    this.#emit({ type: takeover ? 'takeover' : 'acquired', key, token, attempt });
    const keeper = new LeaseKeeper({
      key,
      token,
      leaseMs,
      guard: this.#guard,
      emit: this.#emit,
      renewals: this.#renewalsFor(leaseMs),
    });
    let result: R;
    try {
      result = await request.run(new ClaimContext(key, token, attempt, takeover, keeper));
    } catch (error) {
      keeper.stop();
      await this.#release(key, token, 'error');
      throw error;
    }
    keeper.stop();
    let verdict: Verdict;
    try {
      verdict = request.settle(result);
    } catch (error) {
      await this.#release(key, token, 'error');
      throw error;
    }
    if (!verdict.keep) {
      await this.#release(key, token, 'notKept');
      return { kind: 'executed', result, token, attempt, stored: false };
    }
    await this.#complete(key, token, verdict.outcome, verdict.retentionMs ?? retentionMs);
    return { kind: 'executed', result, token, attempt, stored: true };
  }

  /**
   * Transactional mode: the claim, the user code and the stored outcome share one store transaction, which is
   * also the claim's lease (no renewal). A result not kept rolls the user's writes back with the claim, so a
   * retry runs again against unchanged data.
   */
  async #executeInTransaction<R>(
    request: ExecuteRequest<R>,
    leaseMs: number,
    retentionMs: number,
  ): Promise<ExecuteResult<R>> {
    const { key, fingerprint } = request;
    const store = this.store;
    const ran: { result?: R; token?: number; attempt?: number; failed?: boolean } = {};
    let done: Exclude<TransactionResult, Busy>;
    try {
      done = await this.#untilFree<Exclude<TransactionResult, Busy>>(request, (waitMs) =>
        store.runInTransaction!({
          key,
          fingerprint,
          leaseMs,
          retentionMs,
          waitMs,
          work: async ({ token, attempt, takeover, transaction, signal }) => {
            this.#emit({ type: takeover ? 'takeover' : 'acquired', key, token, attempt });
            try {
              const result = await request.run({ key, token, attempt, takeover, signal, transaction });
              const verdict = request.settle(result);
              Object.assign(ran, { result, token, attempt });
              if (!verdict.keep) return { commit: false };
              const outcome =
                sealInline(verdict.outcome, this.#envelope) ??
                (await sealOutcome(key, verdict.outcome, this.#envelope));
              return { commit: true, outcome, retentionMs: verdict.retentionMs ?? retentionMs };
            } catch (error) {
              ran.failed = true;
              this.#emit({ type: 'released', key, token, reason: 'error' });
              throw error;
            }
          },
        }),
      );
    } catch (error) {
      if (!ran.failed && isStoreUnavailableError(error)) {
        this.#emit({ type: 'storeError', operation: 'transaction', error });
      }
      throw error;
    }
    if (done.kind === 'replay') return this.#replayed(key, done);
    const token = ran.token!;
    const executed = { kind: 'executed', result: ran.result as R, token, attempt: ran.attempt! } as const;
    if (done.kind === 'rolledBack') {
      this.#emit({ type: 'released', key, token, reason: 'notKept' });
      return { ...executed, stored: false };
    }
    this.#emit({ type: 'completed', key, token });
    return { ...executed, stored: true };
  }

  /** One shared renewal timer per lease length (routes may set their own). */
  #renewalsFor(leaseMs: number): DeadlineQueue {
    let queue = this.#renewals.get(leaseMs);
    if (queue === undefined) {
      queue = new DeadlineQueue(Math.max(1, Math.floor(leaseMs / 3)));
      this.#renewals.set(leaseMs, queue);
    }
    return queue;
  }

  /** The replay of a completed record; a promise only when its body must come from the blob store. */
  #replayed<R>(
    key: string,
    replay: Extract<BeginResult, { readonly kind: 'replay' }>,
  ): ExecuteResult<R> | Promise<ExecuteResult<R>> {
    this.#emit({ type: 'replayed', key });
    const { completedAt } = replay;
    const opened = openInline(replay.outcome, this.#envelope);
    if (opened !== undefined) return { kind: 'replayed', outcome: opened, completedAt };
    return openOutcome(replay.outcome, this.#envelope).then((outcome) => ({
      kind: 'replayed',
      outcome,
      completedAt,
    }));
  }

  /**
   * Calls `once` until the key is free (whatever `once` returns besides `inProgress`), waiting for a concurrent
   * duplicate while `waitMs` allows; `once` gets the wait left. A mismatch or an exhausted wait throws.
   */
  async #untilFree<T extends { readonly kind: string }>(
    { key, waitMs = 0 }: { readonly key: string; readonly waitMs?: number },
    once: (remainingMs: number) => Promise<T | Busy>,
    first?: T | Busy,
  ): Promise<T> {
    const deadline = Date.now() + waitMs;
    let pollMs = POLL_MIN_MS;
    let result = first;
    for (;;) {
      result ??= await once(Math.max(0, deadline - Date.now()));
      if (!isBusy(result)) return result;
      if (result.kind === 'mismatch') {
        this.#emit({ type: 'mismatch', key });
        throw new FingerprintMismatchError();
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        this.#emit({ type: 'conflict', key, retryAfterMs: result.retryAfterMs });
        throw new InProgressError(result.retryAfterMs, result.attempt);
      }
      await this.#waitForKey(key, Math.min(remaining, result.retryAfterMs), pollMs);
      pollMs = Math.min(pollMs * 2, POLL_MAX_MS);
      result = undefined;
    }
  }

  /** The store's notification where it has one (a hint), a short sleep otherwise; `begin` decides either way. */
  async #waitForKey(key: string, timeoutMs: number, pollMs: number): Promise<void> {
    const waitFor = this.store.waitFor?.bind(this.store);
    if (waitFor !== undefined) {
      try {
        await waitFor(key, { timeoutMs: Math.max(1, timeoutMs) });
        return;
      } catch {
        // A failing notification channel degrades to polling; the next begin reports a dead store.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(timeoutMs, pollMs))));
  }

  async #complete(key: string, token: number, outcome: Outcome, retentionMs: number): Promise<void> {
    const stored = sealInline(outcome, this.#envelope) ?? (await sealOutcome(key, outcome, this.#envelope));
    let unsure = false;
    for (let retry = 0; ; retry++) {
      try {
        const result = await this.#guard.call('complete', (store) =>
          store.complete({ key, token, outcome: stored, retentionMs }),
        );
        // After a failed attempt, "fenced" may only mean that attempt went through and its reply was lost.
        if (result.kind === 'fenced' && !(unsure && (await this.#completedBy(key, token)))) {
          this.#emit({ type: 'fenced', key, token, operation: 'complete' });
          throw new LeaseLostError(token);
        }
        this.#emit({ type: 'completed', key, token });
        return;
      } catch (error) {
        const delay = COMPLETE_RETRY_DELAYS_MS[retry];
        if (!isStoreUnavailableError(error) || error.outcomeStored || delay === undefined) throw error;
        unsure = true;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** True when the record is completed under `token`: an earlier attempt of ours stored it. */
  async #completedBy(key: string, token: number): Promise<boolean> {
    const record = await this.#guard.call('get', (store) => store.get(key));
    return record?.state === 'completed' && record.token === token;
  }

  async #release(key: string, token: number, reason: 'error' | 'notKept'): Promise<void> {
    try {
      const result = await this.#guard.call('release', (store) => store.release({ key, token }));
      if (result.kind === 'fenced') this.#emit({ type: 'fenced', key, token, operation: 'release' });
      else this.#emit({ type: 'released', key, token, reason });
    } catch {
      // The key stays claimed until its lease ends; then a retry takes it over. Nothing is lost by waiting.
    }
  }
}

/**
 * The context of a claim. `signal` is read through the keeper, which makes its AbortController only for code
 * that asks for it (one costs microseconds per request); a class, because an object literal with a getter is
 * slow to create.
 */
class ClaimContext implements ExecutionContext {
  readonly #keeper: LeaseKeeper;

  constructor(
    readonly key: string,
    readonly token: number,
    readonly attempt: number,
    readonly takeover: boolean,
    keeper: LeaseKeeper,
  ) {
    this.#keeper = keeper;
  }

  get signal(): AbortSignal {
    return this.#keeper.signal;
  }
}
