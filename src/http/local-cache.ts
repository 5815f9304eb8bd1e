/**
 * @module The in-process cache of completed outcomes (`localCache`): hot replays answered without a store call,
 * bounded in entries, bytes and time.
 */
import type { HttpAnswer } from './problem.js';

export interface LocalCacheOptions {
  /** Most outcomes held. Default 10,000. */
  readonly maxEntries?: number;
  /** Most body bytes held, all entries together. Default 67,108,864 (64 MiB). */
  readonly maxBytes?: number;
  /**
   * How long an outcome is served from this process before the store is asked again. Default 60,000 ms; never
   * longer than the record's own retention. It bounds how long a record deleted by an operator still replays.
   */
  readonly ttlMs?: number;
}

interface Entry {
  readonly fingerprint: string;
  /** The replay answer, built once (with `Idempotent-Replayed: true`). */
  readonly answer: HttpAnswer;
  readonly bytes: number;
  readonly expiresAt: number;
}

export type CacheLookup =
  | { readonly kind: 'miss' }
  | { readonly kind: 'hit'; readonly answer: HttpAnswer }
  | { readonly kind: 'mismatch' };

const MISS: CacheLookup = { kind: 'miss' };
const MISMATCH: CacheLookup = { kind: 'mismatch' };
// Header names and values, the key and the fingerprint: counted roughly so many tiny entries still add up.
const ENTRY_OVERHEAD_BYTES = 256;

/**
 * Completed outcomes kept in this process, so hot replays skip the store round trip. Sound because a completed
 * record never changes until it expires: its fingerprint and response are fixed, so a hit answers exactly what
 * the store would. Bounded in entries and bytes, least recently used out first.
 */
export class LocalOutcomeCache {
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #ttlMs: number;
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(options: Required<LocalCacheOptions>) {
    this.#maxEntries = options.maxEntries;
    this.#maxBytes = options.maxBytes;
    this.#ttlMs = options.ttlMs;
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  lookup(key: string, fingerprint: string, now = Date.now()): CacheLookup {
    const entry = this.#entries.get(key);
    if (entry === undefined) return MISS;
    if (entry.expiresAt <= now) {
      this.#remove(key, entry);
      return MISS;
    }
    // Refresh its place in the LRU order.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.fingerprint === fingerprint ? { kind: 'hit', answer: entry.answer } : MISMATCH;
  }

  /** Remembers a completed outcome until `min(ttlMs, recordExpiresAt)`. */
  remember(
    key: string,
    fingerprint: string,
    answer: HttpAnswer,
    recordExpiresAt: number,
    now = Date.now(),
  ): void {
    const bytes = answer.body.byteLength + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.#maxBytes) return;
    const previous = this.#entries.get(key);
    if (previous !== undefined) this.#remove(key, previous);
    const expiresAt = Math.min(now + this.#ttlMs, recordExpiresAt);
    if (expiresAt <= now) return;
    this.#entries.set(key, { fingerprint, answer, bytes, expiresAt });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#remove(oldest, entry);
    }
  }

  #remove(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}
