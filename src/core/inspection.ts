/**
 * @module The store inspection interface: what tools (the dashboard, the `oncely` CLI, an operator's script) ask
 * a store about its records without knowing how it lays them out. A store offers it as `store.inspector`; each
 * store keeps sole ownership of its record format (Redis bytes, SQL rows), and a tool that reads only this
 * interface works on every store, ours and third-party ones (`runStoreConformance` tests it).
 *
 * Every walk is bounded twice: `limit` records per list, and `scanLimit` units of work (keys a Redis SCAN walks,
 * rows a SQL statement reads, entries a memory store visits), so a survey is safe on a busy production store. A
 * walk that stopped at `scanLimit` says `truncated`: its counts are then lower bounds.
 *
 * Removing a record (`Store.delete`), purging expired ones (`Store.purgeExpired`) and whole-store counts
 * (`Store.stats`) stay on the `Store` contract; releasing a stuck key is `Store.release` with the token that
 * `record` shows. All times are milliseconds by the store's clock.
 */
import type { BodyEncoding, BodyStorage, HeaderPairs, KeyState } from './record-shape.js';

/** A completed record's outcome by its metadata, the body bytes only when asked for. */
export interface OutcomeView {
  /** The stored status (0 for outcomes that are not HTTP responses). */
  readonly status: number;
  /** The kept headers, names and values, in order. */
  readonly headers: HeaderPairs;
  /** Size of the body as stored (after compression), bytes. */
  readonly bodyBytes: number;
  readonly encoding: BodyEncoding;
  readonly storage: BodyStorage;
  /** The body as stored (see `encoding`; `openOutcome` from `oncely/store` decompresses), only with `body: true`. */
  readonly body?: Uint8Array;
}

/** One record as a list shows it: its header fields, never the outcome's headers or body. */
export interface RecordSummary {
  /** The storage key (the hashed scoped key: the raw key never reaches a store). */
  readonly key: string;
  /** The route or scope the key belongs to (e.g. `POST /payments`), where the record keeps one. */
  readonly label?: string;
  readonly state: KeyState;
  /** As the store keeps it (see `KeyRecord.fingerprint`). */
  readonly fingerprint: string;
  /** The fencing token of the latest claim. */
  readonly token: number;
  /** Claims so far: the first run, takeovers and runs after a release. */
  readonly attempt: number;
  readonly leaseUntil: number;
  /** `leaseUntil` minus the store's clock, in progress only (negative: the lease ran out; the next claim takes over). */
  readonly leaseLeftMs: number | undefined;
  readonly createdAt: number;
  readonly completedAt: number | undefined;
  readonly expiresAt: number;
  /** The stored status of a completed record, where the store's read reaches it without the body. */
  readonly status: number | undefined;
  /** Whether the latest claim was a takeover; undefined where the store does not keep it. */
  readonly takenOver: boolean | undefined;
}

/** One record in full: the summary plus its outcome's metadata (and body, when asked). */
export interface RecordView extends RecordSummary {
  readonly outcome: OutcomeView | undefined;
}

export interface RecordViewOptions {
  /** Return the stored body bytes too (`outcome.body`). Default false: a view never carries a body unasked. */
  readonly body?: boolean;
}

/**
 * A kind of completed record a tool wants listed apart, recognised by its fingerprint and an outcome of exactly
 * one header and no body: the inbox's parked mark (`inbox-message`, `oncely-inbox: parked`) is one.
 */
export interface RecordMark {
  /** The fingerprint `begin` is given for such a record (the store compares it as it keeps it). */
  readonly fingerprint: string;
  readonly header: readonly [name: string, value: string];
}

export interface SurveyOptions {
  /** Records per list, ≥ 1. */
  readonly limit: number;
  /** The bound of work, ≥ 1: keys scanned, rows read or entries visited, oncely's records or not. */
  readonly scanLimit: number;
  /** The lists to fill. Default all three states. The counts cover every state either way. */
  readonly states?: readonly KeyState[];
  /** Also list the completed records that carry this mark (`Survey.marked`). */
  readonly mark?: RecordMark;
  /** Only records whose storage key starts with this (a namespace of a custom key scheme; the conformance kit's per-test keys). */
  readonly keyPrefix?: string;
}

export interface StateCounts {
  /** Live records (expired ones are not records any more, whether or not the backend removed them yet). */
  readonly records: number;
  readonly inProgress: number;
  readonly completed: number;
  readonly released: number;
  /** In progress with a lease that ran out: stuck until the next request with the key takes it over. */
  readonly leaseExpired: number;
}

export interface Survey {
  readonly counts: StateCounts;
  /** Per state, at most `limit`: in progress least lease left first, completed latest first, released newest first. */
  readonly lists: Readonly<Record<KeyState, readonly RecordSummary[]>>;
  /** With `mark`: how many marked records the walk found, and the latest `limit` of them. */
  readonly marked?: { readonly count: number; readonly records: readonly RecordSummary[] };
  /** The walk stopped at `scanLimit` before the end: the counts are lower bounds and the lists may miss records. */
  readonly truncated: boolean;
  /** Work done, in the unit of `scanLimit`; at most `scanLimit`. */
  readonly scanned: number;
}

/**
 * What a store tells tools about its records. Implement both methods; `SurveyTally` (from `oncely/store`) does
 * the counting and ordering for a store that reads its records one by one.
 */
export interface StoreInspector {
  /** One bounded walk: counts by state and the first `limit` records of each list. */
  survey(options: SurveyOptions): Promise<Survey>;
  /** One record's view, or undefined when there is none (or it expired); the body only with `body: true`. */
  record(key: string, options?: RecordViewOptions): Promise<RecordView | undefined>;
}
