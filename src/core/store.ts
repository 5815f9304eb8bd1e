/**
 * @module The Store contract: the few atomic primitives every backend implements. Policy (leases, renewal, outcome
 * rules, compression, timeouts) lives in the engine; a store only makes each transition of the state machine
 * atomic. Every store passes the shared contract suite in `oncely/testing`.
 *
 * State machine per key:
 *
 *   (none | released) --begin--> inProgress --complete(token)--> completed --(retention)--> (none)
 *   inProgress --release(token)--> released          inProgress --lease expired + begin--> inProgress (takeover)
 *
 * All times are milliseconds; `key` is the already scoped and hashed storage key (see `scopedKey`).
 */
// This file's declarations use AbortSignal: the directive, kept in its .d.ts, loads it from @types/node for Node
// projects without the DOM lib whose tsconfig does not list @types/node (TypeScript 6+ lists none by default).
/// <reference types="node" preserve="true" />
import type { StoreInspector } from './inspection.js';
import type { BodyEncoding, BodyStorage, HeaderPairs, KeyState } from './record-shape.js';

export type { BodyEncoding, BodyStorage, HeaderPairs, KeyState };

/** The outcome as a store keeps it: small metadata plus the body bytes, never re-serialized. */
export interface StoredOutcome {
  /** HTTP status, or 0 for outcomes that are not HTTP responses (function results, messages). */
  readonly status: number;
  readonly headers: HeaderPairs;
  readonly body: Uint8Array;
  readonly encoding: BodyEncoding;
  readonly storage: BodyStorage;
}

export interface BeginInput {
  readonly key: string;
  /** Hash of the request that first used the key; a later request with another one is a mismatch. */
  readonly fingerprint: string;
  /** How long the claim holds before another caller may take over. */
  readonly leaseMs: number;
  /** How long the record of an in-progress key is kept, so stuck keys stay visible and tokens keep rising. */
  readonly retentionMs: number;
  /**
   * What the key belongs to, for operators (`POST /payments/:id`, `fn:charge`, `inbox:ledger`): 1 to 200
   * characters without control characters (the engine makes it with `labelOf`; stores check it with
   * `checkLabel`). Kept from the claim that creates the record: a takeover, a claim after a release, complete,
   * release and renew keep the label the record has (or its lack of one); only a claim on a key with no live
   * record sets it. Undefined: the record has none.
   */
  readonly label?: string | undefined;
}

export type BeginResult =
  /** The caller owns the key. `takeover` is true when a previous owner's lease ran out (crash or stall). */
  | {
      readonly kind: 'acquired';
      readonly token: number;
      readonly attempt: number;
      readonly takeover: boolean;
    }
  /** Another caller holds a live lease on the key. */
  | { readonly kind: 'inProgress'; readonly retryAfterMs: number; readonly attempt: number }
  /** The key was used with another fingerprint. */
  | { readonly kind: 'mismatch' }
  /** The key completed: here is its outcome. */
  | { readonly kind: 'replay'; readonly outcome: StoredOutcome; readonly completedAt: number };

/** Result of a fenced transition: `fenced` means the token is no longer the key's current claim. */
export type TransitionResult = { readonly kind: 'ok' } | { readonly kind: 'fenced' };

export interface CompleteInput {
  readonly key: string;
  readonly token: number;
  readonly outcome: StoredOutcome;
  /** How long the completed record is replayed before it expires. */
  readonly retentionMs: number;
}

export interface ReleaseInput {
  readonly key: string;
  readonly token: number;
}

export interface RenewInput {
  readonly key: string;
  readonly token: number;
  readonly leaseMs: number;
}

/** What `get` shows an operator: the whole record, for inspection and tests. */
export interface KeyRecord {
  readonly key: string;
  readonly state: KeyState;
  /**
   * The fingerprint as the store keeps it: the one `begin` was given, or enough of it to tell requests apart (the
   * Redis store keeps the first 16 characters of a 43-character SHA-256 fingerprint and shows them followed by `…`).
   */
  readonly fingerprint: string;
  /** The fencing token of the latest acquisition; strictly increasing per key. */
  readonly token: number;
  /** How many times the key was acquired (first run, takeovers and runs after a release). */
  readonly attempt: number;
  /** When the current lease ends (meaningful while in progress). */
  readonly leaseUntil: number;
  readonly createdAt: number;
  readonly completedAt: number | undefined;
  readonly expiresAt: number;
  readonly outcome: StoredOutcome | undefined;
  /** What the key belongs to, as its first claim gave it (`BeginInput.label`); absent when it was given none. */
  readonly label?: string | undefined;
}

export interface WaitForOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/**
 * What a store talks to, for telemetry: `oncely/otel` turns it into OpenTelemetry's database attributes
 * (`db.system.name`, `server.address`, `server.port`, `db.namespace`, `db.collection.name`). Only what is known
 * without a network call.
 */
export interface StoreEndpoint {
  /** The database as OpenTelemetry names it (`redis`, `postgresql`). */
  readonly system: string;
  /** Host name, IP address or Unix socket path. */
  readonly address?: string;
  readonly port?: number;
  /** The database: its name (PostgreSQL) or index (Redis). */
  readonly namespace?: string;
  /** The table (`schema.table`) the records live in. */
  readonly collection?: string;
}

export interface Store {
  /** Short name for logs and errors (`memory`, `redis`, `postgres`). */
  readonly name: string;
  /** Optional: the database behind the store, for telemetry. A store without one is traced as in-process. */
  readonly endpoint?: StoreEndpoint | undefined;
  /** One atomic step: claim the key, or report why not (in progress, mismatch, replay). */
  begin(input: BeginInput): Promise<BeginResult>;
  /** Store the outcome if `token` is still the key's current claim. */
  complete(input: CompleteInput): Promise<TransitionResult>;
  /** Give the key up (the outcome is not to be kept) if `token` is still the current claim. */
  release(input: ReleaseInput): Promise<TransitionResult>;
  /** Extend the lease if `token` is still the current claim. */
  renew(input: RenewInput): Promise<TransitionResult>;
  /** The record as stored, or undefined when there is none (or it expired). */
  get(key: string): Promise<KeyRecord | undefined>;
  /** Remove the record whatever its state; true if there was one. */
  delete(key: string): Promise<boolean>;
  /**
   * Optional: resolve once the key is no longer in progress (completed, released or gone), or with false at the
   * timeout. A hint only: the engine calls `begin` again afterwards, so spurious wake-ups are harmless.
   */
  waitFor?(key: string, options: WaitForOptions): Promise<boolean>;
  /**
   * Optional (every oncely store has one): bounded listing and counting by state, one record's view, for the
   * dashboard, the CLI and other tools, which then need nothing of the store's record format. See `inspection.ts`.
   */
  readonly inspector?: StoreInspector | undefined;
  /** Optional: counts for `oncely stats` and dashboards. */
  stats?(): Promise<StoreStats>;
  /**
   * Optional: remove expired records in bounded batches (stores whose backend does not expire keys by itself).
   * Resolves with the number of records removed.
   */
  purgeExpired?(options?: PurgeOptions): Promise<number>;
  /** Optional: release resources the store itself created (never the caller's client). */
  close?(): Promise<void>;
  /**
   * Optional, transactional mode: claim the key inside a database transaction that stays open, so the record and
   * the user's own writes (made through `transaction.handle`) commit or roll back together: a crash leaves
   * neither. The Engine claims every key through it when the store has it. The open transaction is the claim: no
   * lease renewal, no takeover while it is open. A duplicate that finds the key held by an open transaction waits
   * up to `waitMs` for it (then sees its outcome), or reports `inProgress`. Failures of the store's own statements
   * reject as `OncelyError`s (usually `StoreUnavailableError`, the driver's error as `cause`).
   */
  beginTransaction?(input: TransactionBeginInput): Promise<TransactionBeginResult>;
}

export interface TransactionBeginInput extends BeginInput {
  /** How long to wait for a concurrent transaction holding the key; 0 asks for `inProgress` quickly. */
  readonly waitMs: number;
}

/** An open transaction that holds a claimed key. Settle it once: `commit` or `rollback`. */
export interface StoreTransaction {
  /** What the user code writes through (for PostgreSQL, the transaction's `pg` client). */
  readonly handle: unknown;
  /** Aborted when the transaction's connection is lost. */
  readonly signal: AbortSignal;
  /**
   * Stores the outcome in the transaction and commits it with the user's writes. Rejects with
   * `StoreUnavailableError` when the commit fails or its result is unknown (the connection broke).
   */
  commit(outcome: StoredOutcome, retentionMs: number): Promise<void>;
  /**
   * Rolls everything back, the claim included, and gives the connection back. Rejects only when the holder's code
   * ended the transaction itself (PostgreSQL: `TransactionEscapedError`, after undoing what it can), so that the
   * bug shows instead of passing as a rollback.
   */
  rollback(): Promise<void>;
  /**
   * Ends the transaction for a holder that may still be writing through `handle` (its claim ran out): rolls it
   * back so that nothing written through the handle afterwards can commit (PostgreSQL: the connection is closed,
   * not returned to the pool). Rejects only with `TransactionEscapedError`, when the holder's code had committed
   * the claim itself, so that the key is kept as a failure instead of being taken over and run again.
   */
  abort(): Promise<void>;
  /**
   * Called once the holder is done with the handle of a transaction `abort` ended (its claim settled, or tried to):
   * a store that keeps the handle fenced after `abort` (it takes no writes, but is still the holder's) gives it back
   * here. Never rejects.
   */
  close?(): Promise<void>;
}

/** `beginTransaction`'s answer: the claim with its open transaction, or why the key was not claimed. */
export type TransactionBeginResult =
  | {
      readonly kind: 'acquired';
      readonly token: number;
      readonly attempt: number;
      readonly takeover: boolean;
      readonly transaction: StoreTransaction;
    }
  | Exclude<BeginResult, { readonly kind: 'acquired' }>;

export interface StoreStats {
  /** Records held, expired ones not yet removed included where the backend cannot tell them apart cheaply. */
  readonly records: number;
  readonly inProgress?: number;
  readonly completed?: number;
  readonly released?: number;
  /** Approximate bytes used by the records, where the backend can tell. */
  readonly bytes?: number;
}

export interface PurgeOptions {
  /** Rows removed per statement. */
  readonly batchSize?: number;
  /** Stop after this many batches (the next run continues). */
  readonly maxBatches?: number;
}

/**
 * The next fencing token: strictly above `previous`, the highest token the key ever had, and never below the
 * store's clock. A store may forget a removed record's token (expired, deleted, evicted) only once its clock has
 * passed it, because from then on `now` alone out-ranks it; until then it keeps it (a tombstone) and passes it
 * here. So no token is handed out twice per key and a removed record's owner stays fenced (conformance:
 * cases/fencing.ts).
 */
export const nextFencingToken = (previous: number, nowMs: number): number => Math.max(previous + 1, nowMs);
