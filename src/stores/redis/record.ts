/**
 * @module The bytes of a Redis record, read and written on the TypeScript side: the scripts only unpack the fixed
 * header and fingerprint, while the outcome (status, headers through static tables, body) is encoded and decoded
 * here alone, so its format has one owner.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import type { BodyEncoding, BodyStorage, HeaderPairs, KeyRecord, StoredOutcome } from '../../core/store.js';
import { fingerprintShown } from './fingerprint-region.js';
import {
  checkedOutcomeStart,
  completedAtOf,
  corrupt,
  fingerprintSpan,
  headerFields,
  isLabelled,
  isTagged,
  stateOf,
} from './record-header.js';

/**
 * The outcome of a completed record, after its fingerprint and label regions (layouts in `scripts/lib/record.lua`
 * and docs/stores/redis.md, headers in `record-header.ts`), the same in every layout. Only this module reads and
 * writes it: the scripts store it and hand it back as it is.
 *
 *   u16  status
 *   u8   encoding (low 4 bits: 0 identity, 1 gzip, 2 br) | storage << 4 (0 inline, 1 blob, 2 omitted)
 *   u8   number of headers (0xff: a u32 count follows), then per header its name and its value, each either
 *          0x00-0x7f  entry n of a static table (`HEADER_NAMES` for names, `HEADER_VALUES` for values)
 *          0x80-0xfe  a literal of (byte - 0x80) bytes, which follow
 *          0xff       a u32 length, then a literal of that many bytes
 *   …    body bytes, the rest of the record
 *
 * The tables spare the usual `content-type: application/json` its 34 bytes: with layout 4's header and a SHA-256
 * fingerprint's 17-byte region, a record with a 200-byte body and no label fits Redis' 256-byte allocation class.
 * They are frozen: a new entry needs a new layout byte.
 */
const HEADER_NAMES: readonly string[] = [
  'content-type',
  'location',
  'etag',
  'cache-control',
  'content-language',
  'content-disposition',
  'content-encoding',
  'content-location',
  'last-modified',
  'expires',
  'link',
  'vary',
  'retry-after',
  'x-powered-by',
  'x-request-id',
  'set-cookie',
  'date',
  'pragma',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'x-content-type-options',
];

const HEADER_VALUES: readonly string[] = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain; charset=utf-8',
  'text/html; charset=utf-8',
  'application/problem+json',
  'application/octet-stream',
  'text/plain',
  'Express',
  'no-store',
  'no-cache',
  'nosniff',
  'Accept-Encoding',
  'Origin',
  '*',
  'br',
  'gzip',
];

const NAME_CODES = new Map(HEADER_NAMES.map((name, i) => [name, i]));
const VALUE_CODES = new Map(HEADER_VALUES.map((value, i) => [value, i]));
const ENCODINGS: readonly BodyEncoding[] = ['identity', 'gzip', 'br'];
const STORAGES: readonly BodyStorage[] = ['inline', 'blob', 'omitted'];

/** The outcome as ARGV of complete-1.lua: one buffer, the body copied in once. */
export function encodeOutcome(outcome: StoredOutcome): Buffer {
  const { status, headers, body, encoding, storage } = outcome;
  if (!Number.isInteger(status) || status < 0 || status > 0xffff) {
    throw new InvalidOptionsError(
      `redis store: an outcome status must be a whole number 0-65535, not ${status}`,
    );
  }
  const enc = ENCODINGS.indexOf(encoding);
  const sto = STORAGES.indexOf(storage);
  if (enc < 0 || sto < 0) {
    throw new InvalidOptionsError(`redis store: unknown body encoding or storage (${encoding}, ${storage})`);
  }
  const parts: (number | Buffer)[] = [];
  let size = 3 + (headers.length < 0xff ? 1 : 5) + body.byteLength;
  for (const [name, value] of headers) {
    for (const [text, codes] of [
      [name, NAME_CODES],
      [value, VALUE_CODES],
    ] as const) {
      const code = codes.get(text);
      if (code !== undefined) {
        parts.push(code);
        size += 1;
      } else {
        const bytes = Buffer.from(text, 'utf8');
        parts.push(bytes);
        size += (bytes.length < 0x7f ? 1 : 5) + bytes.length;
      }
    }
  }
  const out = Buffer.allocUnsafe(size);
  out.writeUInt16BE(status, 0);
  out[2] = enc | (sto << 4);
  let at = 3;
  if (headers.length < 0xff) out[at++] = headers.length;
  else {
    out[at] = 0xff;
    out.writeUInt32BE(headers.length, at + 1);
    at += 5;
  }
  for (const part of parts) {
    if (typeof part === 'number') out[at++] = part;
    else {
      if (part.length < 0x7f) out[at++] = 0x80 + part.length;
      else {
        out[at] = 0xff;
        out.writeUInt32BE(part.length, at + 1);
        at += 5;
      }
      at += part.copy(out, at);
    }
  }
  out.set(body, at);
  return out;
}

/** The label region of begin-1.lua's ARGV[5]: the label's UTF-8 length (u16) and bytes. */
export function encodeLabel(label: string): Buffer {
  const length = Buffer.byteLength(label, 'utf8');
  const out = Buffer.allocUnsafe(2 + length);
  out.writeUInt16BE(length, 0);
  out.write(label, 2, 'utf8');
  return out;
}

/** A record's bytes (`get-1.lua`) as a `KeyRecord`, in any layout. */
export function decodeRecord(key: string, bytes: unknown): KeyRecord {
  const buf = asBuffer(bytes);
  const outcomeAt = checkedOutcomeStart(buf);
  const fields = headerFields(buf);
  if (fields === undefined) throw corrupt(`unknown state byte ${buf[1]}`);
  const completed = fields.state === 'completed';
  const record: KeyRecord = {
    key,
    state: fields.state,
    fingerprint: fingerprintOf(buf),
    token: fields.token,
    attempt: fields.attempt,
    leaseUntil: fields.leaseUntil,
    createdAt: fields.createdAt,
    completedAt: completed ? fields.completedAt : undefined,
    expiresAt: fields.expiresAt,
    outcome: completed ? decodeOutcome(buf, outcomeAt) : undefined,
  };
  const label = recordLabel(buf);
  return label === undefined ? record : { ...record, label };
}

/** The record a replay returns (bare bytes from begin-1.lua): its outcome and completion time. */
export function decodeReplay(bytes: unknown): { outcome: StoredOutcome; completedAt: number } {
  const buf = asBuffer(bytes);
  const outcomeAt = checkedOutcomeStart(buf);
  if (stateOf(buf) !== 'completed') throw corrupt('a replay of a record that is not completed');
  return { completedAt: completedAtOf(buf), outcome: decodeOutcome(buf, outcomeAt) };
}

/** What `get` shows of a record's fingerprint (its header and fingerprint region known whole). */
export function fingerprintOf(buf: Buffer): string {
  const span = fingerprintSpan(buf)!;
  if (isTagged(buf)) return fingerprintShown(buf, span.at, span.length);
  return buf.toString('utf8', span.at, span.at + span.length);
}

/** The label of a record (layouts 3, 5, 7), or undefined. `buf` holds the record at least up to its outcome. */
export function recordLabel(buf: Buffer): string | undefined {
  if (!isLabelled(buf)) return undefined;
  const span = fingerprintSpan(buf)!;
  const at = span.at + span.length;
  return buf.toString('utf8', at + 2, at + 2 + buf.readUInt16BE(at));
}

function asBuffer(bytes: unknown): Buffer {
  if (!Buffer.isBuffer(bytes)) throw corrupt('a record reply that is not bytes');
  return bytes;
}

function decodeOutcome(buf: Buffer, start: number): StoredOutcome {
  let at = start;
  const need = (n: number) => {
    if (at + n > buf.length) throw corrupt('the stored outcome is truncated');
  };
  need(4);
  const status = buf.readUInt16BE(at);
  const codes = buf[at + 2]!;
  const encoding = ENCODINGS[codes & 0x0f];
  const storage = STORAGES[codes >> 4];
  if (encoding === undefined || storage === undefined)
    throw corrupt(`unknown body encoding/storage ${codes}`);
  at += 3;
  let count = buf[at++]!;
  if (count === 0xff) {
    need(4);
    count = buf.readUInt32BE(at);
    at += 4;
  }
  const text = (table: readonly string[]): string => {
    need(1);
    const b = buf[at++]!;
    if (b < 0x80) {
      const entry = table[b];
      if (entry === undefined) throw corrupt(`unknown header table entry ${b}`);
      return entry;
    }
    let length = b - 0x80;
    if (b === 0xff) {
      need(4);
      length = buf.readUInt32BE(at);
      at += 4;
    }
    need(length);
    const value = buf.toString('utf8', at, at + length);
    at += length;
    return value;
  };
  const headers: (readonly [string, string])[] = [];
  for (let i = 0; i < count; i++) {
    const name = text(HEADER_NAMES);
    headers.push([name, text(HEADER_VALUES)]);
  }
  // A copy: the reply buffer may be a view into a larger socket chunk that a long-lived record would pin.
  const body = new Uint8Array(buf.subarray(at));
  return { status, headers: headers as HeaderPairs, body, encoding, storage };
}
