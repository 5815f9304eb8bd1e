/**
 * @module The header of a Redis record in each of its layouts, read on the TypeScript side: where the fingerprint,
 * the label and the outcome start, and the fields `get`, the inspector and `stats` show. The byte diagram is in
 * `scripts/lib/record.lua` and docs/stores/redis.md; the scripts read the same bytes.
 */
import { CorruptRecordError } from '../../core/errors.js';
import type { KeyState } from '../../core/store.js';

/**
 * Layout 4 (5 with a label), what this version writes when the numbers fit: a 29-byte header, times as distances
 * from the token, the state byte carrying the waiter mark, the fingerprint region tagged (`fingerprint-region.ts`).
 */
export const COMPACT = 29;
/** Layouts 2, 3 (written before layout 4), 6 and 7 (layout 4's fields at these widths): a 43-byte header. */
export const FIXED = 43;

// The state byte is the ASCII letter: 'p' (0x70), 'c' (0x63), 'r' (0x72).
const STATES: Readonly<Record<number, KeyState>> = { 112: 'inProgress', 99: 'completed', 114: 'released' };

/** Layout 4 or 5. */
export const isCompact = (buf: Buffer): boolean => buf[0] === 4 || buf[0] === 5;
/** Layouts 3, 5 and 7 hold a label region after the fingerprint region. */
export const isLabelled = (buf: Buffer): boolean => (buf[0]! & 1) === 1;
/** Layouts 4 to 7 keep the fingerprint region tagged; layouts 2 and 3 keep the fingerprint's bytes as they are. */
export const isTagged = (buf: Buffer): boolean => buf[0]! >= 4;

/** The record's fields, as `get` and the inspector show them. */
export interface HeaderFields {
  readonly state: KeyState;
  readonly attempt: number;
  readonly token: number;
  readonly leaseUntil: number;
  readonly expiresAt: number;
  readonly createdAt: number;
  /** 0 unless completed. */
  readonly completedAt: number;
}

/** The state of a record whose layout byte is known good, or undefined for an unknown state byte. */
export function stateOf(buf: Buffer): KeyState | undefined {
  return STATES[isCompact(buf) ? buf[1]! & 0x7f : buf[1]!];
}

/** The header's fields (the layout byte known good, the buffer holding at least the header). */
export function headerFields(buf: Buffer): HeaderFields | undefined {
  const state = stateOf(buf);
  if (state === undefined) return undefined;
  if (isCompact(buf)) {
    const token = buf.readUIntBE(4, 6);
    return {
      state,
      attempt: buf.readUInt16BE(2),
      token,
      createdAt: token - buf.readUInt32BE(10),
      leaseUntil: token + buf.readInt32BE(14),
      expiresAt: token + buf.readInt32BE(18),
      completedAt: state === 'completed' ? token + buf.readInt32BE(22) : 0,
    };
  }
  return {
    state,
    attempt: buf.readUInt32BE(5),
    token: buf.readUIntBE(9, 6),
    leaseUntil: buf.readUIntBE(15, 6),
    expiresAt: buf.readUIntBE(21, 6),
    createdAt: buf.readUIntBE(27, 6),
    completedAt: state === 'completed' ? buf.readUIntBE(33, 6) : 0,
  };
}

/** When a completed record completed (its layout byte known good). */
export function completedAtOf(buf: Buffer): number {
  return isCompact(buf) ? buf.readUIntBE(4, 6) + buf.readInt32BE(22) : buf.readUIntBE(33, 6);
}

/** A record's logical end (its layout byte known good). */
export function expiresAtOf(buf: Buffer): number {
  return isCompact(buf) ? buf.readUIntBE(4, 6) + buf.readInt32BE(18) : buf.readUIntBE(21, 6);
}

/**
 * Where the fingerprint region starts and how long it is, or undefined when `buf` is too short to say. In layouts 2
 * and 3 the region is the fingerprint's bytes; in 4 to 7 a tag byte and what it tags.
 */
export function fingerprintSpan(buf: Buffer): { readonly at: number; readonly length: number } | undefined {
  if (isCompact(buf)) {
    if (buf.length <= COMPACT) return undefined;
    const tag = buf[COMPACT]!;
    // 127 (a long fingerprint) never appears in layout 4: its length does not fit the tag.
    if (tag === 127) return undefined;
    return { at: COMPACT, length: tag === 126 ? 17 : tag + 1 };
  }
  if (buf.length < FIXED) return undefined;
  return { at: FIXED, length: buf.readUInt16BE(3) };
}

/** The end of the fingerprint region (the buffer known to hold a header), or -1 when it cannot be told. */
export function fingerprintEnd(buf: Buffer): number {
  const span = fingerprintSpan(buf);
  return span === undefined ? -1 : span.at + span.length;
}

/**
 * The layout byte and what it needs: a record of a known layout (2 to 7) holding its whole header, fingerprint
 * region and label region; else a `CorruptRecordError`. Returns the end of the label region (of the fingerprint
 * region without a label): where a completed record's outcome starts.
 */
export function checkedOutcomeStart(buf: Buffer): number {
  const layout = buf[0];
  if (layout === undefined || layout < 2 || layout > 7) throw corrupt('not a record of a known layout');
  if (buf.length < (isCompact(buf) ? COMPACT + 1 : FIXED)) throw corrupt('a record shorter than its header');
  const end = fingerprintEnd(buf);
  if (end < 0 || buf.length < end) throw corrupt('a record shorter than its fingerprint');
  if (!isLabelled(buf)) return end;
  if (buf.length < end + 2 || buf.length < end + 2 + buf.readUInt16BE(end))
    throw corrupt('a record shorter than its label');
  return end + 2 + buf.readUInt16BE(end);
}

export function corrupt(message: string): CorruptRecordError {
  return new CorruptRecordError(`redis store: ${message}`);
}

/** The state and logical end of a record's first bytes (for `stats`' GETRANGE), or undefined if not a record. */
export function peekHeader(bytes: Buffer): { state: KeyState; expiresAt: number } | undefined {
  const layout = bytes[0];
  if (layout === undefined || layout < 2 || layout > 7) return undefined;
  if (bytes.length < (isCompact(bytes) ? COMPACT : FIXED)) return undefined;
  const state = stateOf(bytes);
  return state === undefined ? undefined : { state, expiresAt: expiresAtOf(bytes) };
}
