/**
 * @module The in-memory store: the `Store` contract in one process, atomic because each transition runs
 * synchronously within one turn of the event loop. It is the default of `idempotent()`, the reference the other
 * stores are held to, and refused under `NODE_ENV=production` unless asked for by name.
 */
import { InvalidOptionsError } from '../core/errors.js';
import type { StoreInspector } from '../core/inspection.js';
import { checkLabel } from '../core/label.js';
import {
  type BeginInput,
  type BeginResult,
  type CompleteInput,
  type KeyRecord,
  nextFencingToken,
  type ReleaseInput,
  type RenewInput,
  type Store,
  type StoredOutcome,
  type StoreStats,
  type TransitionResult,
  type WaitForOptions,
} from '../core/store.js';
import { knownOptions, wholeNumber } from '../core/validate.js';
import { MemoryInspector } from './memory-inspection.js';

export interface MemoryStoreOptions {
  /**
   * Most records kept. Past it, the least recently used completed or released records are evicted; in-progress
   * records never are (their owners are running), so the count can exceed the cap by the number of requests in
   * flight. Default 100,000.
   */
  readonly maxEntries?: number;
  /** How often expired records are swept out; 0 sweeps only lazily on access. Default 60,000 ms. */
  readonly sweepIntervalMs?: number;
  /** The store's clock. Default `Date.now`; tests pass a fake one. */
  readonly clock?: () => number;
  /**
   * Allow this store when `NODE_ENV` is `production`, where it is refused by default: one process's memory is not
   * shared with the app's other instances and is lost on every restart. For single-process tools. Default false.
   */
  readonly allowInProduction?: boolean;
}

type MutableRecord = { -readonly [K in keyof KeyRecord]: KeyRecord[K] };

/**
 * The embedded default and the reference semantics of the Store contract: every transition is atomic because it
 * runs synchronously within one turn of the event loop. One process only: for several instances use the Redis or
 * PostgreSQL store.
 */
export class MemoryStore implements Store {
  readonly name = 'memory';
  readonly #maxEntries: number;
  readonly #now: () => number;
  // In-progress records live apart from settled ones, so eviction can take the oldest settled record in O(1).
  readonly #active = new Map<string, MutableRecord>();
  // Completed and released records in least-recently-used order (a Map iterates in insertion order).
  readonly #settled = new Map<string, MutableRecord>();
  readonly #waiters = new Map<string, Set<() => void>>();
  // The token of a record that is gone (deleted, expired, evicted) while the clock had not passed it yet: the next
  // claim must still out-rank it (see `#forget`). Entries live about a millisecond; `sweep` drops stale ones.
  readonly #tombstones = new Map<string, number>();
  readonly #sweeper: NodeJS.Timeout | undefined;
  // Where eviction resumes: one live iterator over `#settled`, oldest first, kept across calls. A fresh iteration
  // per eviction walks the holes V8's hash table keeps for deleted entries until it rehashes: with the store at
  // its cap of 100,000 records that measured 25 µs per begin + complete (2.2 µs with the kept iterator).
  #evictionCursor: Iterator<string> | undefined;
  /** Bounded listing and one record's view, for tools (see `StoreInspector`). */
  readonly inspector: StoreInspector = new MemoryInspector({
    walk: () => [this.#active.values(), this.#settled.values()],
    now: () => this.#now(),
    get: (key) => this.get(key),
  });

  constructor(options: MemoryStoreOptions = {}) {
    knownOptions('MemoryStore', options, ['maxEntries', 'sweepIntervalMs', 'clock', 'allowInProduction']);
    refuseInProduction(options.allowInProduction);
    this.#maxEntries = wholeNumber('maxEntries', options.maxEntries, 100_000, { min: 1 });
    const sweepIntervalMs = wholeNumber('sweepIntervalMs', options.sweepIntervalMs, 60_000);
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new InvalidOptionsError('clock must be a function returning milliseconds');
    }
    this.#now = options.clock ?? Date.now;
    if (sweepIntervalMs > 0) {
      this.#sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
      this.#sweeper.unref();
    }
  }

  /** Number of records held, expired ones not yet swept included. */
  get size(): number {
    return this.#active.size + this.#settled.size;
  }

  async begin({ key, fingerprint, leaseMs, retentionMs, label }: BeginInput): Promise<BeginResult> {
    checkLabel(label, 'memory');
    const now = this.#now();
    const record = this.#find(key, now);
    if (record === undefined || record.state === 'released') {
      this.#settled.delete(key);
      const token = nextFencingToken(record?.token ?? this.#tombstones.get(key) ?? 0, now);
      this.#tombstones.delete(key);
      const attempt = (record?.attempt ?? 0) + 1;
      // A claim after a release continues the record: its label (or lack of one) stays the first claim's.
      const kept = record === undefined ? label : record.label;
      this.#active.set(key, {
        key,
        state: 'inProgress',
        fingerprint,
        token,
        attempt,
        leaseUntil: now + leaseMs,
        createdAt: record?.createdAt ?? now,
        completedAt: undefined,
        expiresAt: now + retentionMs,
        outcome: undefined,
        label: kept,
      });
      return { kind: 'acquired', token, attempt, takeover: false };
    }
    if (record.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (record.state === 'completed') {
      this.#touch(record);
      return { kind: 'replay', outcome: copyOutcome(record.outcome!), completedAt: record.completedAt! };
    }
    if (record.leaseUntil > now) {
      return { kind: 'inProgress', retryAfterMs: record.leaseUntil - now, attempt: record.attempt };
    }
    record.token = nextFencingToken(record.token, now);
    record.attempt += 1;
    record.leaseUntil = now + leaseMs;
    record.expiresAt = now + retentionMs;
    return { kind: 'acquired', token: record.token, attempt: record.attempt, takeover: true };
  }

  async complete({ key, token, outcome, retentionMs }: CompleteInput): Promise<TransitionResult> {
    const now = this.#now();
    const record = this.#owned(key, token, now);
    if (record === undefined) return { kind: 'fenced' };
    record.state = 'completed';
    record.outcome = copyOutcome(outcome);
    record.completedAt = now;
    record.expiresAt = now + retentionMs;
    this.#settle(record, now);
    return { kind: 'ok' };
  }

  async release({ key, token }: ReleaseInput): Promise<TransitionResult> {
    const now = this.#now();
    const record = this.#owned(key, token, now);
    if (record === undefined) return { kind: 'fenced' };
    record.state = 'released';
    this.#settle(record, now);
    return { kind: 'ok' };
  }

  async renew({ key, token, leaseMs }: RenewInput): Promise<TransitionResult> {
    const now = this.#now();
    const record = this.#owned(key, token, now);
    if (record === undefined) return { kind: 'fenced' };
    record.leaseUntil = now + leaseMs;
    return { kind: 'ok' };
  }

  async get(key: string): Promise<KeyRecord | undefined> {
    const record = this.#find(key, this.#now());
    if (record === undefined) return undefined;
    return { ...record, outcome: record.outcome && copyOutcome(record.outcome) };
  }

  async delete(key: string): Promise<boolean> {
    const now = this.#now();
    const record = this.#find(key, now);
    if (record !== undefined) this.#forget(record, now);
    this.#notify(key);
    return record !== undefined;
  }

  waitFor(key: string, { timeoutMs, signal }: WaitForOptions): Promise<boolean> {
    const record = this.#find(key, this.#now());
    if (record === undefined || record.state !== 'inProgress') return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(key) ?? new Set<() => void>();
      this.#waiters.set(key, waiters);
      const done = (changed: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        waiters.delete(wake);
        if (waiters.size === 0) this.#waiters.delete(key);
        resolve(changed);
      };
      const wake = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      waiters.add(wake);
    });
  }

  async stats(): Promise<StoreStats> {
    let completed = 0;
    for (const record of this.#settled.values()) if (record.state === 'completed') completed++;
    return {
      records: this.size,
      inProgress: this.#active.size,
      completed,
      released: this.#settled.size - completed,
    };
  }

  async purgeExpired(): Promise<number> {
    return this.sweep();
  }

  /** Drops expired records now (also runs on a timer). */
  sweep(): number {
    const now = this.#now();
    let removed = 0;
    for (const map of [this.#active, this.#settled]) {
      for (const record of map.values()) {
        if (record.expiresAt <= now) {
          this.#forget(record, now);
          removed++;
        }
      }
    }
    this.#dropStaleTombstones(now);
    return removed;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
  }

  #find(key: string, now: number): MutableRecord | undefined {
    const record = this.#active.get(key) ?? this.#settled.get(key);
    if (record === undefined || record.expiresAt > now) return record;
    this.#forget(record, now);
    return undefined;
  }

  /**
   * Removes a record (deleted, expired or evicted). A new claim's token is `max(previous + 1, now)`, so once the
   * clock has passed the record's token, `now` alone out-ranks every token the key ever had and nothing needs
   * keeping. Until then (the record was claimed this very millisecond, or tokens ran ahead of the clock through
   * several claims in one millisecond) its token stays behind as a tombstone, or the next claim could get the
   * same token and the removed record's owner would pass as the new one.
   */
  #forget(record: MutableRecord, now: number): void {
    this.#active.delete(record.key);
    this.#settled.delete(record.key);
    if (record.token < now) return;
    if (this.#tombstones.size >= 1_024) this.#dropStaleTombstones(now);
    this.#tombstones.set(record.key, Math.max(record.token, this.#tombstones.get(record.key) ?? 0));
  }

  #dropStaleTombstones(now: number): void {
    for (const [key, token] of this.#tombstones) if (token < now) this.#tombstones.delete(key);
  }

  #owned(key: string, token: number, now: number): MutableRecord | undefined {
    const record = this.#find(key, now);
    return record?.state === 'inProgress' && record.token === token ? record : undefined;
  }

  #settle(record: MutableRecord, now: number): void {
    this.#active.delete(record.key);
    this.#settled.delete(record.key);
    this.#settled.set(record.key, record);
    if (this.size > this.#maxEntries) this.#evict(record.key, now);
    this.#notify(record.key);
  }

  /** Evicts settled records, least recently used first, down to the cap; never `keep` (its retry must replay). */
  #evict(keep: string, now: number): void {
    let restarted = false;
    while (this.size > this.#maxEntries) {
      const next = this.#evictionCursor?.next();
      // `keep` was settled last, so reaching it (or the end) means every older record was seen: start over once.
      // A second time means only `keep` and in-progress records are left; the next eviction starts afresh.
      if (next === undefined || next.done === true || next.value === keep) {
        if (restarted) {
          this.#evictionCursor = undefined;
          return;
        }
        this.#evictionCursor = this.#settled.keys();
        restarted = true;
        continue;
      }
      const evicted = this.#settled.get(next.value);
      if (evicted !== undefined) this.#forget(evicted, now);
    }
  }

  #touch(record: MutableRecord): void {
    this.#settled.delete(record.key);
    this.#settled.set(record.key, record);
  }

  #notify(key: string): void {
    const waiters = this.#waiters.get(key);
    if (waiters !== undefined) for (const wake of [...waiters]) wake();
  }
}

function copyOutcome(outcome: StoredOutcome): StoredOutcome {
  return {
    ...outcome,
    headers: outcome.headers.map(([n, v]) => [n, v] as const),
    // A copy, not a view: Buffer#slice shares memory, so the caller reusing its buffer would rewrite a replay.
    body: Uint8Array.prototype.slice.call(outcome.body),
  };
}

/**
 * Refuses a MemoryStore under `NODE_ENV=production` unless it is asked for by name: deployed as the default, it
 * looks like it works (every test passes on one instance) while retries that reach another instance, or arrive
 * after a restart, run their effect again.
 */
function refuseInProduction(allowed: unknown): void {
  if (allowed !== undefined && typeof allowed !== 'boolean')
    throw new InvalidOptionsError('allowInProduction must be true or false');
  if (allowed === true || globalThis.process?.env?.NODE_ENV !== 'production') return;
  throw new InvalidOptionsError(
    "MemoryStore refused: NODE_ENV is 'production', and a MemoryStore keeps its records in this one process's memory. " +
      'They are not shared with the other instances of your app and are lost on every restart or deploy, so a retry ' +
      'that reaches another instance, or comes after a restart, runs its effect again. Use a shared store ' +
      "(RedisStore from 'oncely/redis', PostgresStore from 'oncely/postgres'); idempotent() and the decorators use " +
      'a MemoryStore when no store is given. For a single-process tool, pass new MemoryStore({ allowInProduction: true }).',
  );
}

let shared: MemoryStore | undefined;

/** The process-wide store `idempotent()` uses when no store is given. */
export function sharedMemoryStore(): MemoryStore {
  shared ??= new MemoryStore();
  return shared;
}
