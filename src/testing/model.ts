/**
 * @module `KeyModel`: the state machine of one key as plainly as it can be written, the oracle the property test
 * checks a store against; written apart from `MemoryStore` so neither can inherit the other's mistakes.
 */
import type { BeginResult, TransitionResult } from '../core/store.js';

/**
 * The state machine of a key (docs/architecture.md), as plainly as it can be written: the oracle the model-based
 * property test checks a real store against. Deliberately independent of `MemoryStore`'s code.
 */
export interface ModelRecord {
  state: 'inProgress' | 'completed' | 'released';
  fingerprint: string;
  token: number;
  attempt: number;
  leaseUntil: number;
  expiresAt: number;
  body: string | undefined;
}

export class KeyModel {
  record: ModelRecord | undefined;
  /**
   * The highest token ever handed out for the key. It outlives the record (delete, expiry): a new claim gets
   * `max(highest + 1, now)`, so no token is ever handed out twice. A store may forget it once its clock has
   * passed it, since `now` alone then out-ranks it.
   */
  highestToken = 0;

  #live(now: number): ModelRecord | undefined {
    if (this.record !== undefined && this.record.expiresAt <= now) this.record = undefined;
    return this.record;
  }

  begin(
    now: number,
    fingerprint: string,
    leaseMs: number,
    retentionMs: number,
  ): BeginResult | { kind: 'replayOf'; body: string } {
    const r = this.#live(now);
    if (r === undefined || r.state === 'released') {
      const token = Math.max(this.highestToken + 1, now);
      this.highestToken = token;
      const attempt = (r?.attempt ?? 0) + 1;
      this.record = {
        state: 'inProgress',
        fingerprint,
        token,
        attempt,
        leaseUntil: now + leaseMs,
        expiresAt: now + retentionMs,
        body: undefined,
      };
      return { kind: 'acquired', token, attempt, takeover: false };
    }
    if (r.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (r.state === 'completed') return { kind: 'replayOf', body: r.body ?? '' };
    if (r.leaseUntil > now)
      return { kind: 'inProgress', retryAfterMs: r.leaseUntil - now, attempt: r.attempt };
    r.token = Math.max(this.highestToken + 1, now);
    this.highestToken = r.token;
    r.attempt += 1;
    r.leaseUntil = now + leaseMs;
    r.expiresAt = now + retentionMs;
    return { kind: 'acquired', token: r.token, attempt: r.attempt, takeover: true };
  }

  #owned(now: number, token: number): ModelRecord | undefined {
    const r = this.#live(now);
    return r?.state === 'inProgress' && r.token === token ? r : undefined;
  }

  complete(now: number, token: number, body: string, retentionMs: number): TransitionResult {
    const r = this.#owned(now, token);
    if (r === undefined) return { kind: 'fenced' };
    Object.assign(r, { state: 'completed', body, expiresAt: now + retentionMs });
    return { kind: 'ok' };
  }

  release(now: number, token: number): TransitionResult {
    const r = this.#owned(now, token);
    if (r === undefined) return { kind: 'fenced' };
    r.state = 'released';
    return { kind: 'ok' };
  }

  /** Removes the record whatever its state; true if there was a live one. The highest token stays known. */
  delete(now: number): boolean {
    const existed = this.#live(now) !== undefined;
    this.record = undefined;
    return existed;
  }

  renew(now: number, token: number, leaseMs: number): TransitionResult {
    const r = this.#owned(now, token);
    if (r === undefined) return { kind: 'fenced' };
    r.leaseUntil = now + leaseMs;
    return { kind: 'ok' };
  }
}
