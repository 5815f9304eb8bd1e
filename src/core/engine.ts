/**
 * @module The engine: the state machine's driver. `begin` hands out a claim, a replay, a busy answer or a mismatch;
 * `execute` runs a function under a claim and settles it by the verdict. Every entry point (the wrapper, the HTTP
 * adapters, the inbox) goes through it to the store.
 */
// This file's declarations use AbortSignal: the directive, kept in its .d.ts, loads it from @types/node for Node
// projects without the DOM lib whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />
import type { Claim, ExecutionContext } from './claim.js';
import { DeadlineQueue } from './deadline-queue.js';
import { type Emit, emitter, wanted } from './emit.js';
import { type EngineOptions, resolveEngineOptions } from './engine-options.js';
import type { EngineParts } from './engine-parts.js';
import { FingerprintMismatchError, InProgressError, TransactionEscapedError } from './errors.js';
import { isEscapedOutcome } from './escaped-outcome.js';
import { StoreGuard } from './guarded-store.js';
import { type EngineProbe, type ExecutionProbe, NO_EXECUTION, reporter } from './instrumentation.js';
import { labelOf } from './label.js';
import { LeasedClaim, releaseFenced } from './leased-claim.js';
import { type OpenedOutcome, type Outcome, openInline, openOutcome } from './record.js';
import type { BeginInput, BeginResult, KeyRecord, Store, TransactionBeginResult } from './store.js';
import { TransactionClaim } from './transaction-claim.js';

export type { EngineOptions } from './engine-options.js';

export interface BeginRequest {
  /** The hashed storage key (see `scopedKey`). */
  readonly key: string;
  readonly fingerprint: string;
  /**
   * A low-cardinality name of what the key is scoped to (a route, a function), for spans, metrics and the
   * record's label (`BeginInput.label`, kept from the first claim; see `labelOf`): the stored key is `key`
   * whatever this says. Never the client's key or identity.
   */
  readonly scope?: string;
  /** Wait up to this long for a concurrent duplicate to finish (then replay it) before answering `inProgress`. */
  readonly waitMs?: number;
  readonly leaseMs?: number;
  readonly retentionMs?: number;
  /**
   * Local time (ms since the epoch) the caller cannot outlive, such as a Lambda invocation's deadline. The lease
   * never reaches past it, neither at `begin` nor by renewals, so when the caller is killed there its key can be
   * taken over at once instead of a whole lease later. The claim's `deadline` is at most this. Undefined: no such
   * time.
   */
  readonly leaseUntil?: number | undefined;
}

/** What `begin` found: the key is yours (a claim), completed (its outcome), busy, or used for another request. */
export type Begun =
  | { readonly kind: 'acquired'; readonly claim: Claim }
  | { readonly kind: 'replay'; readonly outcome: OpenedOutcome; readonly completedAt: number }
  | { readonly kind: 'inProgress'; readonly retryAfterMs: number; readonly attempt: number }
  | { readonly kind: 'mismatch' };

/** What to do with a result: store it (optionally with its own retention) or let the key go. */
export type Verdict =
  | { readonly keep: true; readonly outcome: Outcome; readonly retentionMs?: number }
  | { readonly keep: false };

export interface ExecuteRequest<R> extends BeginRequest {
  readonly run: (context: ExecutionContext) => Promise<R>;
  /** Decides whether the result is stored. A thrown error always releases the key. */
  readonly settle: (result: R) => Verdict;
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

/** `leaseMs`, cut short where it would reach past `until`; at least 1 ms, since a store cannot grant less. */
export function cappedLease(leaseMs: number, until: number | undefined, sentAt: number): number {
  if (until === undefined) return leaseMs;
  return Math.max(1, Math.min(leaseMs, Math.floor(until - sentAt)));
}

const POLL_MIN_MS = 10;
const beginOn = (store: Store, input: BeginInput): Promise<BeginResult> => store.begin(input);
const POLL_MAX_MS = 250;

type StoreBegun = BeginResult | TransactionBeginResult;
type Busy = Extract<BeginResult, { readonly kind: 'inProgress' }>;

/**
 * Drives the per-key state machine over any `Store`. `begin` claims a key in one store call and hands out a
 * `Claim`, which renews its lease while the code runs and is settled once, by `complete` (the outcome is stored,
 * fenced by the token) or `release`; completed keys replay; the store fails closed behind a timeout and a
 * circuit breaker. `execute` is the same walk for code that is one callback.
 */
export class Engine {
  readonly store: Store;
  readonly leaseMs: number;
  readonly retentionMs: number;
  readonly #parts: EngineParts;
  readonly #renewals = new Map<number, DeadlineQueue>();
  readonly #probe: EngineProbe | undefined;

  constructor(options: EngineOptions) {
    const resolved = resolveEngineOptions(options);
    this.store = resolved.store;
    this.leaseMs = resolved.leaseMs;
    this.retentionMs = resolved.retentionMs;
    const emit = emitter(resolved.onEvent);
    const guard = new StoreGuard(
      resolved.store,
      { timeoutMs: resolved.storeTimeoutMs, breaker: resolved.breaker },
      emit,
    );
    this.#parts = { guard, envelope: resolved.envelope, emit };
    this.#probe = resolved.instrumentation?.engine?.(resolved.store);
  }

  /**
   * Claims the key, or says why not. Rejects only with `StoreUnavailableError` (the store failed, timed out, or
   * the circuit is open), `CorruptRecordError`, or `TransactionEscapedError` for a key whose transaction escaped
   * on an earlier call (kept as a terminal failure). A `begin` whose answer comes after its timeout and says
   * acquired is released at once, so a retry is not locked out for a whole lease.
   */
  begin(request: BeginRequest): Promise<Begun> {
    return this.#observed(request, this.#execution(request));
  }

  /**
   * The key's record as the store has it, read through the same timeout and circuit breaker as every other store
   * call: rejects with `StoreUnavailableError` when the store fails, is slower than `storeTimeoutMs`, or the
   * circuit is open. For status routes and tools; requests go through `begin`.
   */
  inspect(key: string): Promise<KeyRecord | undefined> {
    return this.#parts.guard.call('get', (store) => store.get(key));
  }

  /** `begin`, then `run` while the claim holds, then `complete` or `release` as `settle` says. */
  async execute<R>(request: ExecuteRequest<R>): Promise<ExecuteResult<R>> {
    const probe = this.#execution(request);
    const begun = await this.#observed(request, probe);
    if (begun.kind === 'replay')
      return { kind: 'replayed', outcome: begun.outcome, completedAt: begun.completedAt };
    if (begun.kind === 'inProgress') throw new InProgressError(begun.retryAfterMs, begun.attempt);
    if (begun.kind === 'mismatch') throw new FingerprintMismatchError();
    const { claim } = begun;
    let result: R;
    let verdict: Verdict;
    try {
      result = await probe.run(() => request.run(claim));
      verdict = request.settle(result);
    } catch (error) {
      await claim.release('error');
      throw error;
    }
    const { token, attempt } = claim;
    if (!verdict.keep) {
      await claim.release('notKept');
      return { kind: 'executed', result, token, attempt, stored: false };
    }
    await claim.complete(
      verdict.outcome,
      verdict.retentionMs === undefined ? undefined : { retentionMs: verdict.retentionMs },
    );
    return { kind: 'executed', result, token, attempt, stored: true };
  }

  /** The probe of one execution, made in the caller's async context. */
  #execution(request: BeginRequest): ExecutionProbe {
    return this.#probe === undefined ? NO_EXECUTION : this.#probe.start(request.key, request.scope);
  }

  /** `begin`, and the end of the execution's probe when the answer is not a claim (a claim ends it when settled). */
  #observed(request: BeginRequest, probe: ExecutionProbe): Promise<Begun> {
    const begun = this.#begin(request, probe);
    if (probe === NO_EXECUTION) return begun;
    return begun.then(
      (result) => {
        if (result.kind !== 'acquired') probe.end();
        return result;
      },
      (error: unknown) => {
        probe.end(error);
        throw error;
      },
    );
  }

  #begin(request: BeginRequest, probe: ExecutionProbe): Promise<Begun> {
    return this.#beginOnce(request, request.waitMs ?? 0, probe, true);
  }

  /**
   * One store call: a claim, a replay, or busy / mismatch (with the events they are reported by). The `first`
   * call of a `begin` also decides what a busy key means (wait, or answer in progress), in the same callback:
   * nearly every request is answered by it, so the wait loop costs nothing until a key is busy.
   */
  #beginOnce(request: BeginRequest, waitMs: number, probe: ExecutionProbe, first = false): Promise<Begun> {
    const { key, fingerprint, leaseUntil } = request;
    const renewEveryLease = request.leaseMs ?? this.leaseMs;
    const retentionMs = request.retentionMs ?? this.retentionMs;
    const sentAt = Date.now();
    const leaseMs = cappedLease(renewEveryLease, leaseUntil, sentAt);
    // The scope name spans use is also the record's label: what an operator sees the key belongs to.
    const input = { key, fingerprint, leaseMs, retentionMs, label: labelOf(request.scope) };
    // Without instrumentation the store call is made directly: no closure for a probe that would only call it.
    const pending: Promise<StoreBegun> =
      probe === NO_EXECUTION
        ? this.#storeBegin(input, waitMs)
        : probe.store('begin', () => this.#storeBegin(input, waitMs));
    return pending.then((result) => {
      if (first && result.kind === 'inProgress') {
        if (waitMs > 0) return this.#waitUntilFree(request, result, probe);
        this.#conflict(request, result, probe);
      }
      return this.#begun(result, request, renewEveryLease, sentAt, retentionMs, probe);
    });
  }

  #storeBegin(input: BeginInput, waitMs: number): Promise<StoreBegun> {
    const { guard } = this.#parts;
    return this.store.beginTransaction === undefined
      ? guard.callWith('begin', beginOn, input, this.#onLateBegin)
      : // Not bounded by storeTimeoutMs: a transactional begin queues for a pooled connection and waits on the
        // row lock of a concurrent transaction (up to `waitMs`), which is load, not an outage. The pool's own
        // connection timeout and the claim's lock timeout bound it; a failure still counts for the breaker.
        guard.call('begin', (store) => store.beginTransaction!({ ...input, waitMs }), undefined, false);
  }

  /**
   * The store's answer as a `Begun`. The lease asked for: `renewEveryLease` capped by `request.leaseUntil`, sent
   * at `sentAt` (renewals keep its cadence).
   */
  #begun(
    result: StoreBegun,
    request: BeginRequest,
    renewEveryLease: number,
    sentAt: number,
    retentionMs: number,
    probe: ExecutionProbe,
  ): Begun | Promise<Begun> {
    const { key, leaseUntil, scope } = request;
    const emit = reporter(this.#parts.emit, probe);
    switch (result.kind) {
      case 'acquired': {
        const { token, attempt, takeover } = result;
        const type = takeover ? 'takeover' : 'acquired';
        if (wanted(emit, type)) emit({ type, key, token, attempt }, scope);
        const claim =
          'transaction' in result
            ? new TransactionClaim({
                parts: this.#parts,
                key,
                token,
                attempt,
                takeover,
                transaction: result.transaction,
                probe,
                // The open transaction holds the key (a duplicate waits on its row lock, none can take over), so
                // this deadline only frees a forgotten claim: it counts from the hand-over, not from the send,
                // which may have queued for a pooled connection or a row lock. Never past the caller's own end.
                deadline: Math.min(Date.now() + renewEveryLease, leaseUntil ?? Number.POSITIVE_INFINITY),
                retentionMs,
              })
            : new LeasedClaim(
                this.#parts,
                request,
                result,
                retentionMs,
                renewEveryLease,
                sentAt,
                // Keyed by the uncapped lease: a cap that differs per call must not make a timer per call.
                this.#renewalsFor(renewEveryLease),
                probe,
              );
        return { kind: 'acquired', claim };
      }
      case 'replay':
        return this.#replayed(key, scope, result, emit);
      case 'inProgress':
        return result;
      case 'mismatch':
        if (wanted(emit, 'mismatch')) emit({ type: 'mismatch', key }, scope);
        return result;
    }
  }

  /**
   * Releases a claim whose `begin` answered after its caller had been told the store timed out. Plain stores
   * only: a transactional begin is not bounded by the store timeout, so it never answers late. One function per
   * engine, given the call's input, rather than a closure per call.
   */
  readonly #onLateBegin = (result: BeginResult, input: BeginInput): void => {
    if (result.kind === 'acquired') void releaseFenced(this.#parts, input.key, result.token, 'late');
  };

  #conflict(request: BeginRequest, busy: Busy, probe: ExecutionProbe): void {
    const emit = reporter(this.#parts.emit, probe);
    if (wanted(emit, 'conflict'))
      emit({ type: 'conflict', key: request.key, retryAfterMs: busy.retryAfterMs }, request.scope);
  }

  /** Waits for a concurrent duplicate while `waitMs` allows, asking the store again after each wake-up. */
  async #waitUntilFree(request: BeginRequest, busy: Busy, probe: ExecutionProbe): Promise<Begun> {
    const deadline = Date.now() + (request.waitMs ?? 0);
    let pollMs = POLL_MIN_MS;
    let begun: Begun = busy;
    while (begun.kind === 'inProgress') {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        this.#conflict(request, begun, probe);
        return begun;
      }
      // In transactional mode too: a begin there waits on an open transaction's row lock, but a key held by a
      // committed claim (plain mode on the same table, a joined claim's serialization failure) answers at once,
      // and asking again without a pause would hammer the database until waitMs ran out.
      await this.#waitForKey(request.key, Math.min(remaining, begun.retryAfterMs), pollMs);
      pollMs = Math.min(pollMs * 2, POLL_MAX_MS);
      begun = await this.#beginOnce(request, Math.max(0, deadline - Date.now()), probe);
    }
    return begun;
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
  #replayed(
    key: string,
    scope: string | undefined,
    replay: Extract<BeginResult, { readonly kind: 'replay' }>,
    emit: Emit,
  ): Begun | Promise<Begun> {
    // An earlier call's transaction escaped and committed outside its claim (escaped-outcome.ts): the key answers
    // that failure for its retention, to every entry point alike, and never runs or replays anything else.
    if (isEscapedOutcome(replay.outcome)) throw new TransactionEscapedError(undefined, { replayed: true });
    if (wanted(emit, 'replayed')) emit({ type: 'replayed', key }, scope);
    const { completedAt } = replay;
    const { envelope } = this.#parts;
    const opened = openInline(replay.outcome, envelope);
    if (opened !== undefined) return { kind: 'replay', outcome: opened, completedAt };
    return openOutcome(replay.outcome, envelope).then((outcome) => ({
      kind: 'replay',
      outcome,
      completedAt,
    }));
  }
}
