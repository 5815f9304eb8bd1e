/**
 * @module Rows of the MySQL store as the Store contract's types, and the contract's inputs as the statements'
 * parameters. Text columns are UTF-8 bytes (VARBINARY), so nothing depends on the connection's character set.
 */
import { CorruptRecordError, InvalidKeyError, InvalidOptionsError } from '../../core/errors.js';
import { checkLabel } from '../../core/label.js';
import type {
  BeginInput,
  BeginResult,
  BodyEncoding,
  BodyStorage,
  HeaderPairs,
  KeyRecord,
  KeyState,
  StoredOutcome,
} from '../../core/store.js';
import type { Row, SqlValue } from './driver.js';

const MAX_KEY_BYTES = 512;
const MAX_FINGERPRINT_BYTES = 1024;

const ENCODINGS: readonly BodyEncoding[] = ['identity', 'gzip', 'br'];
const STORAGES: readonly BodyStorage[] = ['inline', 'blob', 'omitted'];
const STATES: readonly KeyState[] = ['inProgress', 'completed', 'released'];

const corrupt = (detail: string) => new CorruptRecordError(`a mysql record is malformed: ${detail}`);

/** A string as the UTF-8 bytes its VARBINARY column holds. */
function bytesOf(text: string, what: string, max: number): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  // A lone surrogate becomes U+FFFD in UTF-8: two different strings would share one row.
  if (/\p{Surrogate}/u.test(text) || bytes.byteLength > max) {
    const message = `mysql store: a ${what} is well-formed text of at most ${max} bytes of UTF-8`;
    throw what === 'key' ? new InvalidKeyError('too-long', message) : new InvalidOptionsError(message);
  }
  return bytes;
}

export const keyBytes = (key: string): Buffer => {
  if (typeof key !== 'string') throw new InvalidKeyError('missing', 'mysql store: a key is a string');
  return bytesOf(key, 'key', MAX_KEY_BYTES);
};

/** A whole number from a BIGINT/INT/DECIMAL column: the drivers hand these over as number, string or BigInt. */
export function numberOf(value: unknown, column: string): number {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'bigint' || typeof value === 'string'
        ? Number(value)
        : Number.NaN;
  if (!Number.isSafeInteger(number)) throw corrupt(`${column} is ${String(value)}`);
  return number;
}

const optionalNumber = (value: unknown, column: string): number | undefined =>
  value === null || value === undefined ? undefined : numberOf(value, column);

/** A VARBINARY column's text (UTF-8). */
export function textOf(value: unknown, column: string): string {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'string') return value;
  throw corrupt(`${column} is ${String(value)}`);
}

function oneOf<T extends string>(values: readonly T[], value: unknown, column: string): T {
  const text = Buffer.isBuffer(value) ? value.toString('latin1') : value;
  if (!values.includes(text as T)) throw corrupt(`${column} is ${String(text)}`);
  return text as T;
}

export const stateOf = (value: unknown): KeyState => oneOf(STATES, value, 'state');

export function headersOf(value: unknown): HeaderPairs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(textOf(value, 'headers'));
  } catch (cause) {
    throw new CorruptRecordError('a mysql record has unreadable headers', { cause });
  }
  const isPair = (pair: unknown) =>
    Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string';
  if (!Array.isArray(parsed) || !parsed.every(isPair)) throw corrupt('headers are not [name, value] pairs');
  return parsed as HeaderPairs;
}

/** The stored outcome of a completed row (or of begin's replay). */
export function outcomeOf(row: Row): StoredOutcome {
  const { body } = row;
  if (!Buffer.isBuffer(body)) throw corrupt('a completed record has no body');
  return {
    status: numberOf(row.status, 'status'),
    headers: headersOf(row.headers),
    body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
    encoding: oneOf(ENCODINGS, row.encoding, 'encoding'),
    storage: oneOf(STORAGES, row.storage, 'storage'),
  };
}

/** begin's answer; `busy` and `stale` are for the caller to decide (see begin.sql). */
export function beginResultOf(row: Row | undefined): BeginResult | 'busy' | 'stale' {
  const outcome = row?.outcome === undefined ? undefined : textOf(row.outcome, 'outcome');
  if (row === undefined || outcome === undefined) throw corrupt('begin answered no row');
  switch (outcome) {
    case 'acquired':
    case 'takeover':
      return {
        kind: 'acquired',
        token: numberOf(row.token, 'token'),
        attempt: numberOf(row.attempt, 'attempt'),
        takeover: outcome === 'takeover',
      };
    case 'inProgress':
      return {
        kind: 'inProgress',
        retryAfterMs: numberOf(row.retry_after_ms, 'retry_after_ms'),
        attempt: numberOf(row.attempt, 'attempt'),
      };
    case 'mismatch':
      return { kind: 'mismatch' };
    case 'replay':
      return {
        kind: 'replay',
        outcome: outcomeOf(row),
        completedAt: numberOf(row.completed_at_ms, 'completed_at_ms'),
      };
    case 'busy':
    case 'stale':
      return outcome;
    default:
      throw corrupt(`begin answered ${outcome}`);
  }
}

/**
 * The parameters of the begin procedure. The label is checked here, the one place the plain and transactional
 * claims both pass through, before it could reach the column.
 */
export function beginValues(
  input: BeginInput,
  now: number | null,
  transaction?: { readonly waitS: number },
): SqlValue[] {
  const { key, fingerprint, leaseMs, retentionMs, label } = input;
  checkLabel(label, 'mysql');
  if (typeof fingerprint !== 'string')
    throw new InvalidOptionsError('mysql store: a fingerprint is a string');
  return [
    keyBytes(key),
    bytesOf(fingerprint, 'fingerprint', MAX_FINGERPRINT_BYTES),
    leaseMs,
    retentionMs,
    now,
    label === undefined ? null : Buffer.from(label, 'utf8'),
    transaction === undefined ? 0 : 1,
    transaction === undefined ? null : transaction.waitS,
  ];
}

/** The parameters of the claim procedure (claim.sql): begin's, without its keep-open flag. */
export function claimValues(input: BeginInput, now: number | null, waitS: number): SqlValue[] {
  return [...beginValues(input, now).slice(0, 6), waitS];
}

/** What the claim procedure answered (claim.sql), and the id of the connection it ran on. */
export interface ClaimAnswer {
  readonly result: BeginResult | 'busy' | 'lost' | 'outside';
  readonly connectionId: number | undefined;
}

export function claimAnswerOf(row: Row | undefined): ClaimAnswer {
  const connectionId = optionalNumber(row?.connection_id, 'connection_id');
  const outcome = row?.outcome === undefined ? undefined : textOf(row.outcome, 'outcome');
  if (outcome === 'lost' || outcome === 'outside') return { result: outcome, connectionId };
  const result = beginResultOf(row);
  // claim.sql starts no rounds over, so it never answers stale.
  if (result === 'stale') throw corrupt('claim answered stale');
  return { result, connectionId };
}

/** The named parameters of complete.sql, for the plain and transactional paths. */
export function completeValues(
  key: string,
  token: number,
  outcome: StoredOutcome,
  retentionMs: number,
  now: number | null,
): Record<string, SqlValue> {
  const { status, headers, body, encoding, storage } = outcome;
  return {
    key: keyBytes(key),
    token,
    status,
    headers: Buffer.from(JSON.stringify(headers), 'utf8'),
    body,
    encoding,
    storage,
    retention: retentionMs,
    now,
  };
}

export function recordOf(row: Row): KeyRecord {
  const state = stateOf(row.state);
  const record: KeyRecord = {
    key: textOf(row.key, 'key'),
    state,
    fingerprint: textOf(row.fingerprint, 'fingerprint'),
    token: numberOf(row.token, 'token'),
    attempt: numberOf(row.attempt, 'attempt'),
    leaseUntil: numberOf(row.lease_until_ms, 'lease_until_ms'),
    createdAt: numberOf(row.created_at_ms, 'created_at_ms'),
    completedAt: state === 'completed' ? numberOf(row.completed_at_ms, 'completed_at_ms') : undefined,
    expiresAt: numberOf(row.expires_at_ms, 'expires_at_ms'),
    outcome: state === 'completed' ? outcomeOf(row) : undefined,
  };
  return row.label == null ? record : { ...record, label: textOf(row.label, 'label') };
}

export { optionalNumber };
