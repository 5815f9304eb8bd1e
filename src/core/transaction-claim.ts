/**
 * @module The claim in transactional mode: it owns an open store transaction, so the key's record and the user's
 * writes commit together on `complete` and roll back together on `release`, on dispose or when the lease runs out.
 */
// This file's declarations use AbortSignal: the directive, kept in its .d.ts, loads it from @types/node for Node
// projects without the DOM lib whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />
import type { Claim, CompleteOptions } from './claim.js';
import type { EngineParts } from './engine-parts.js';
import {
  ClaimSettledError,
  isOncelyError,
  isTransactionEscapedError,
  LeaseLostError,
  StoreUnavailableError,
  TransactionEscapedError,
} from './errors.js';
import { ESCAPED_OUTCOME } from './escaped-outcome.js';
import type { EventHandler, ReleaseReason } from './events.js';
import { type ExecutionProbe, reporter } from './instrumentation.js';
import { type Outcome, seal } from './record.js';
import type { StoreTransaction } from './store.js';

export interface TransactionClaimOptions {
  readonly parts: EngineParts;
  readonly key: string;
  readonly token: number;
  readonly attempt: number;
  readonly takeover: boolean;
  readonly transaction: StoreTransaction;
  readonly probe: ExecutionProbe;
  /** Local time (ms since the epoch) at which the transaction is rolled back if the claim is still open. */
  readonly deadline: number;
  readonly retentionMs: number;
}

/**
 * A claim in transactional mode: it owns an open store transaction (and its connection), so the key's record
 * and the user's writes commit together on `complete` and roll back together on `release`, on dispose, or when
 * the lease runs out with the claim still open (a forgotten claim must not hold a connection and row locks).
 */
export class TransactionClaim implements Claim {
  readonly key: string;
  readonly token: number;
  readonly attempt: number;
  readonly takeover: boolean;
  readonly deadline: number;
  readonly #parts: EngineParts;
  readonly #transaction: StoreTransaction;
  readonly #retentionMs: number;
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;
  readonly #probe: ExecutionProbe;
  readonly #emit: EventHandler;
  #settled = false;
  #lost: LeaseLostError | undefined;

  constructor({
    parts,
    key,
    token,
    attempt,
    takeover,
    transaction,
    probe,
    deadline,
    retentionMs,
  }: TransactionClaimOptions) {
    this.key = key;
    this.token = token;
    this.attempt = attempt;
    this.takeover = takeover;
    this.deadline = deadline;
    this.#parts = parts;
    this.#transaction = transaction;
    this.#retentionMs = retentionMs;
    this.#probe = probe;
    this.#emit = reporter(parts.emit, probe);
    const { signal } = transaction;
    if (signal.aborted) this.#controller.abort(signal.reason);
    else signal.addEventListener('abort', () => this.#controller.abort(signal.reason), { once: true });
    this.#timer = setTimeout(() => void this.#expire(), Math.max(0, deadline - Date.now()));
    this.#timer.unref();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get transaction(): unknown {
    return this.#transaction.handle;
  }

  get settled(): boolean {
    return this.#settled;
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
    let stored: Awaited<ReturnType<typeof seal>>;
    try {
      stored = await seal(key, outcome, this.#parts.envelope);
    } catch (error) {
      await this.#rollback();
      throw error;
    }
    const retentionMs = options?.retentionMs ?? this.#retentionMs;
    try {
      await this.#probe.store('commit', () => this.#transaction.commit(stored, retentionMs));
    } catch (error) {
      if (isTransactionEscapedError(error)) throw await this.#escaped(error);
      const mapped = isOncelyError(error)
        ? error
        : new StoreUnavailableError(`${this.#parts.guard.storeName} commit failed`, { cause: error });
      if (mapped.code === 'ONCELY_STORE_UNAVAILABLE')
        this.#parts.emit({ type: 'storeError', operation: 'commit', error: mapped });
      throw mapped;
    }
    this.#emit({ type: 'completed', key, token });
  }

  async release(reason: ReleaseReason = 'notKept'): Promise<void> {
    // Rolled back at the deadline already: nothing is left to release, and a release never rejects for that.
    if (this.#lost !== undefined) return this.#holderDone();
    this.#settle('release');
    try {
      await this.#rollback();
    } catch (error) {
      const escaped = isTransactionEscapedError(error) ? await this.#escaped(error) : error;
      this.#probe.end(escaped);
      throw escaped;
    }
    this.#emit({ type: 'released', key: this.key, token: this.token, reason });
    this.#probe.end();
  }

  /**
   * The holder's code ended the claim's transaction (the store found out and undid what was still open). If that
   * committed the claim, the writes committed with it cannot be undone: the key is completed, under its token and
   * through the ordinary `Store.complete` (so every store and store wrapper keeps it like any outcome), with the
   * escaped mark, which the engine answers with `TransactionEscapedError` for the key's retention. If it rolled
   * the claim back, the fence refuses (the token is not the record's any more): nothing of the claim committed,
   * and the key is free as PostgreSQL left it. The database decides which, not a guess from the statements sent.
   */
  async #escaped(error: TransactionEscapedError): Promise<TransactionEscapedError> {
    const { key, token } = this;
    try {
      const stored = await seal(key, ESCAPED_OUTCOME, this.#parts.envelope);
      const input = { key, token, outcome: stored, retentionMs: this.#retentionMs };
      const result = await this.#probe.store('complete', () =>
        this.#parts.guard.call('complete', (store) => store.complete(input)),
      );
      const keyOutcome = result.kind === 'ok' ? 'terminal' : 'released';
      return new TransactionEscapedError(token, { keyOutcome, cause: error.cause });
    } catch (cause) {
      // Reported by the guard (storeError). The key stays in progress until its lease ends, then a takeover runs
      // the effect again: the error says so, so the operator can complete or delete the key by hand.
      return new TransactionEscapedError(token, { keyOutcome: 'unknown', cause });
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#lost !== undefined) return this.#holderDone();
    if (!this.#settled) await this.release('disposed');
  }

  /** After a lease end, the holder settling the claim says it is done with the handle (`StoreTransaction.close`). */
  async #holderDone(): Promise<void> {
    await this.#transaction.close?.().catch(() => {});
  }

  #settle(attempted: 'complete' | 'release'): void {
    // Rolled back at the deadline: the caller must learn its outcome was not stored, not that it settled twice.
    if (this.#lost !== undefined) {
      void this.#holderDone();
      throw this.#lost;
    }
    if (this.#settled) throw new ClaimSettledError(this.token, attempted);
    this.#settled = true;
    clearTimeout(this.#timer);
  }

  async #expire(): Promise<void> {
    if (this.#settled) return;
    this.#settled = true;
    const lost = new LeaseLostError(this.token);
    this.#lost = lost;
    this.#emit({ type: 'leaseLost', key: this.key, token: this.token });
    this.#controller.abort(lost);
    // Not `rollback`: the holder's code may still write through the handle, and must not write outside the claim.
    try {
      await this.#probe.store('rollback', () => this.#transaction.abort());
    } catch (error) {
      // The holder's code committed the claim before its lease ran out: kept as the key's terminal failure, or a
      // takeover would run the effect again. Nobody waits on a lease end, so the error is only reported.
      const escaped = isTransactionEscapedError(error) ? await this.#escaped(error) : error;
      this.#probe.end(escaped);
      return;
    }
    this.#probe.end();
  }

  /**
   * Rejects only when the holder's code ended the transaction itself (`TransactionEscapedError`, the store's
   * contract, settled by `#escaped`); the probe sees the call settle either way.
   */
  #rollback(): Promise<void> {
    return this.#probe.store('rollback', () => this.#transaction.rollback());
  }
}
