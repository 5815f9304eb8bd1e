/**
 * @module What a survey reads of one Redis record: its first bytes only (GETRANGE), decoded into a summary
 * without the body. The record format stays this folder's: see `record.ts` and `scripts/lib/record.lua`.
 */
import type { RecordMark, RecordSummary } from '../../core/inspection.js';
import { fingerprintRegion } from './fingerprint-region.js';
import { encodeOutcome, fingerprintOf, recordLabel } from './record.js';
import { FIXED, fingerprintSpan, headerFields, isLabelled, isTagged } from './record-header.js';

/**
 * Bytes read of each record: the header, a fingerprint region (17 for HTTP in layout 4, 43 in layout 2, 14 for the
 * inbox), a short label and the start of the outcome (its status, and the whole of a mark). A record whose label
 * runs past it is read whole instead (`tooShort`).
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
  const layout = bytes[0];
  if (layout === undefined || layout < 2 || layout > 7) return { kind: 'none' };
  const whole = bytes.length < PEEK;
  const span = fingerprintSpan(bytes);
  if (span === undefined) return whole ? { kind: 'none' } : { kind: 'tooShort' };
  const fields = headerFields(bytes);
  if (fields === undefined) return { kind: 'none' };
  const fingerprintEnd = span.at + span.length;
  const completed = fields.state === 'completed';
  if (bytes.length < fingerprintEnd + (isLabelled(bytes) ? 2 : 0))
    return whole ? { kind: 'none' } : { kind: 'tooShort' };
  const outcomeAt = isLabelled(bytes)
    ? fingerprintEnd + 2 + bytes.readUInt16BE(fingerprintEnd)
    : fingerprintEnd;
  if (!whole && outcomeAt + (completed ? 2 : 0) > bytes.length) return { kind: 'tooShort' };
  if (whole && outcomeAt > bytes.length) return { kind: 'none' };
  const label = recordLabel(bytes);
  const status = completed && bytes.length >= outcomeAt + 2 ? bytes.readUInt16BE(outcomeAt) : undefined;
  const summary: RecordSummary = {
    key,
    ...(label === undefined ? {} : { label }),
    state: fields.state,
    fingerprint: fingerprintOf(bytes),
    attempt: fields.attempt,
    token: fields.token,
    leaseUntil: fields.leaseUntil,
    leaseLeftMs: fields.state === 'inProgress' ? fields.leaseUntil - now : undefined,
    createdAt: fields.createdAt,
    completedAt: completed ? fields.completedAt : undefined,
    expiresAt: fields.expiresAt,
    status,
    // The layout keeps no takeover flag; the attempt count and the event log tell instead.
    takenOver: undefined,
  };
  const marked =
    mark !== undefined &&
    completed &&
    whole &&
    status !== undefined &&
    sameFingerprint(bytes, span, mark.fingerprint) &&
    bytes.subarray(outcomeAt).equals(markBytes(mark, status));
  return { kind: 'record', summary, marked };
}

/** Whether the record's fingerprint region is what a claim with `fingerprint` writes (or wrote before layout 4). */
function sameFingerprint(bytes: Buffer, span: { at: number; length: number }, fingerprint: string): boolean {
  const region = bytes.subarray(span.at, span.at + span.length);
  return region.equals(Buffer.from(isTagged(bytes) ? fingerprintRegion(fingerprint) : fingerprint, 'utf8'));
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
