/**
 * @module The claim: ownership of one key as `Engine#begin` hands it out (token, attempt, signal, deadline),
 * settled once by `complete` or `release`; and the execution context user code gets while it owns the key.
 */
// This file's declarations use AbortSignal: the directive, kept in its .d.ts, loads it from @types/node for Node
// projects without the DOM lib whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />
import type { ReleaseReason } from './events.js';
import type { Outcome } from './record.js';

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
  /**
   * Aborted (with a `LeaseLostError`) when the claim is lost while the code runs: a renewal was fenced, or the
   * lease reached its deadline without a confirmed renewal.
   */
  readonly signal: AbortSignal;
  /**
   * Transactional mode only (a store with `beginTransaction`, such as `PostgresStore#transactional()`): the open
   * transaction to write through, so the effect commits or rolls back with the key's record. Undefined otherwise.
   */
  readonly transaction?: unknown;
}

export interface CompleteOptions {
  /** Keep this outcome for this many ms instead of the engine's (or the begin request's) retention. */
  readonly retentionMs?: number;
}

/**
 * Ownership of one key, handed out by `Engine#begin`. Settle it once: `complete` stores the outcome (fenced by the
 * token), `release` lets the key go so a retry runs again. `await using claim = …` releases a claim that was
 * neither completed nor released when the scope ends, whatever threw.
 *
 * @example
 * const begun = await engine.begin({ key, fingerprint });
 * if (begun.kind === 'acquired') {
 *   await using claim = begun.claim;
 *   const receipt = await charge(order, { fencingToken: claim.token, signal: claim.signal });
 *   await claim.complete({ status: 201, headers: [], body: encode(receipt) });
 * }
 */
export interface Claim extends ExecutionContext {
  /**
   * Local time (ms since the epoch) by which the claim is given up unless a renewal extends it: `leaseMs` after
   * the `begin` was sent, so no other caller can have taken the key over before it.
   */
  readonly deadline: number;
  /** True once `complete` or `release` was called. */
  readonly settled: boolean;
  /**
   * Stores the outcome if the claim still holds (a replay then gets it). Rejects with `LeaseLostError` when the
   * key was taken over, `StoreUnavailableError` when the store cannot confirm it, `ClaimSettledError` when called
   * twice.
   */
  complete(outcome: Outcome, options?: CompleteOptions): Promise<void>;
  /**
   * Lets the key go without an outcome, so the next request with it runs again. Never rejects for the store's
   * sake: a release that cannot reach the store leaves the key to be taken over when the lease ends. `reason` is
   * reported in the `released` event (default `notKept`).
   */
  release(reason?: ReleaseReason): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}
