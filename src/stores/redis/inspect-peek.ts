/**
 * @module What a survey reads of one Redis record: its first bytes only (GETRANGE), decoded into a summary
 * without the body. The record format stays this folder's: see `record.ts` and `scripts/lib/record.lua`.
 */
import type { RecordMark, RecordSummary } from '../../core/inspection.js';
import { encodeOutcome, FIXED, outcomeStart, peekHeader, recordLabel } from './record.js';

/**
 * Bytes read of each record: the fixed header, a fingerprint (43 for HTTP, 13 for the inbox), a short label and
 * the start of the outcome (its status, and the whole of a mark). A record whose label runs past it is read
 * whole instead (`tooShort`).
 */
export const PEEK = FIXED + 256;

export type Peeked =
  | { readonly kind: 'record'; readonly summary: RecordSummary; readonly marked: boolean }
  /** The peek ended inside the label or the status: read the record whole. */
  | { readonly kind: 'tooShort' }
  /** Not a record of this store (another program's key under the prefix, or one removed meanwhile). */
  | { readonly kind: 'none' };

/** A record's first `PEEK` bytes (all of them when it is shorter) as a summary, by the store's clock `now`. */
export function peekRecord(key: string, bytes: Buffer, now: number, mark: RecordMark | undefined): Peeked {
  const header = peekHeader(bytes);
  if (header === undefined) return { kind: 'none' };
  const whole = bytes.length < PEEK;
  const fingerprintEnd = FIXED + bytes.readUInt16BE(3);
  const completed = header.state === 'completed';
  if (!whole && fingerprintEnd + 2 > bytes.length) return { kind: 'tooShort' };
  const outcomeAt = outcomeStart(bytes);
  if (!whole && outcomeAt + (completed ? 2 : 0) > bytes.length) return { kind: 'tooShort' };
  const fingerprint = bytes.toString('utf8', FIXED, fingerprintEnd);
  const label = recordLabel(bytes);
  const leaseUntil = bytes.readUIntBE(15, 6);
  const status = completed && bytes.length >= outcomeAt + 2 ? bytes.readUInt16BE(outcomeAt) : undefined;
  const summary: RecordSummary = {
    key,
    ...(label === undefined ? {} : { label }),
    state: header.state,
    fingerprint,
    attempt: bytes.readUInt32BE(5),
    token: bytes.readUIntBE(9, 6),
    leaseUntil,
    leaseLeftMs: header.state === 'inProgress' ? leaseUntil - now : undefined,
    createdAt: bytes.readUIntBE(27, 6),
    completedAt: completed ? bytes.readUIntBE(33, 6) : undefined,
    expiresAt: header.expiresAt,
    status,
    // The layout keeps no takeover flag; the attempt count and the event log tell instead.
    takenOver: undefined,
  };
  const marked =
    mark !== undefined &&
    completed &&
    whole &&
    status !== undefined &&
    fingerprint === mark.fingerprint &&
    bytes.subarray(outcomeAt).equals(markBytes(mark, status));
  return { kind: 'record', summary, marked };
}

/** The outcome bytes of a mark, exactly as `complete` writes them: one header, an empty body. */
function markBytes(mark: RecordMark, status: number): Buffer {
  return encodeOutcome({
    status,
    headers: [mark.header],
    body: new Uint8Array(0),
    encoding: 'identity',
    storage: 'inline',
  });
}
