/**
 * @module The PostgreSQL store's rows into typed results and inputs into statement parameters: the store parses
 * every column it reads with its own type parsers, so a user's global `pg.types` settings cannot change what it
 * sees, and a malformed row becomes a `CorruptRecordError`.
 */
import { CorruptRecordError } from '../../core/errors.js';
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
import type { SqlValue } from './sql.js';

/** A row as the store's own type parsers hand it over: JS values, never the pool's global parsers' idea. */
export type Row = Readonly<Record<string, unknown>>;

type Parser = (value: string) => unknown;

const OID = { bool: 16, bytea: 17, int8: 20, int2: 21, int4: 23, void: 2278 } as const;

// node-postgres reads results as text (its binary mode decodes bytes as UTF-8, losing them), so every column
// is parsed here: users' `pg.types.setTypeParser` calls cannot change what the store reads.
function parserFor(oid: number): Parser {
  return (value) => {
    switch (oid) {
      case OID.bool:
        return value === 't';
      case OID.int8:
      case OID.int4:
      case OID.int2:
        return Number(value);
      case OID.bytea:
        return parseByteaText(value);
      case OID.void:
        return null;
      default:
        return value;
    }
  };
}

/** `types` for a pg query config: the store's own parsers for every column it reads. */
export const storeTypes = {
  getTypeParser: (oid: number): Parser => parserFor(oid),
};

/** bytea in text form: `\x…` hex (the default) or the legacy escape format (`bytea_output = escape`). */
function parseByteaText(text: string): Uint8Array {
  if (text.startsWith('\\x')) return new Uint8Array(Buffer.from(text.slice(2), 'hex'));
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') {
      bytes.push(text.charCodeAt(i));
    } else if (text[i + 1] === '\\') {
      bytes.push(0x5c);
      i += 1;
    } else {
      bytes.push(Number.parseInt(text.slice(i + 1, i + 4), 8));
      i += 3;
    }
  }
  return new Uint8Array(bytes);
}

const ENCODINGS: readonly BodyEncoding[] = ['identity', 'gzip', 'br'];
const STORAGES: readonly BodyStorage[] = ['inline', 'blob', 'omitted'];
const STATES: readonly KeyState[] = ['inProgress', 'completed', 'released'];

const num = (row: Row, column: string): number => {
  const value = row[column];
  if (typeof value !== 'number') throw corrupt(`${column} is ${String(value)}`);
  return value;
};

const corrupt = (detail: string) => new CorruptRecordError(`a postgres record is malformed: ${detail}`);

function oneOf<T extends string>(values: readonly T[], value: unknown, column: string): T {
  if (!values.includes(value as T)) throw corrupt(`${column} is ${String(value)}`);
  return value as T;
}

function headersOf(text: unknown): HeaderPairs {
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(text));
  } catch (cause) {
    throw new CorruptRecordError('a postgres record has unreadable headers', { cause });
  }
  const isPair = (pair: unknown) =>
    Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string';
  if (!Array.isArray(parsed) || !parsed.every(isPair)) throw corrupt('headers are not [name, value] pairs');
  return parsed as HeaderPairs;
}

/** The stored outcome of a completed row. */
export function outcomeOf(row: Row): StoredOutcome {
  const body = row.body;
  if (!(body instanceof Uint8Array)) throw corrupt('a completed record has no body');
  return {
    status: num(row, 'status'),
    headers: headersOf(row.headers),
    body,
    encoding: oneOf(ENCODINGS, row.encoding, 'encoding'),
    storage: oneOf(STORAGES, row.storage, 'storage'),
  };
}

/** The outcome of begin.sql, or `stale` when the statement has to run again (see the statement's header). */
export function beginResultOf(row: Row | undefined): BeginResult | 'stale' {
  if (row === undefined) return 'stale';
  switch (row.outcome) {
    case 'acquired':
    case 'takeover':
      return {
        kind: 'acquired',
        token: num(row, 'token'),
        attempt: num(row, 'attempt'),
        takeover: row.outcome === 'takeover',
      };
    case 'inProgress':
      return { kind: 'inProgress', retryAfterMs: num(row, 'retry_after_ms'), attempt: num(row, 'attempt') };
    case 'mismatch':
      return { kind: 'mismatch' };
    case 'replay':
      return { kind: 'replay', outcome: outcomeOf(row), completedAt: num(row, 'completed_at_ms') };
    case 'stale':
      return 'stale';
    default:
      throw corrupt(`begin answered ${String(row.outcome)}`);
  }
}

/**
 * The parameters of begin.sql ($1 … $6), for the plain and transactional claims. The label is checked here, the
 * one place both pass through, before it could reach the column.
 */
export function beginValues(input: BeginInput, now: number | null): readonly SqlValue[] {
  const { key, fingerprint, leaseMs, retentionMs, label } = input;
  checkLabel(label, 'postgres');
  return [key, fingerprint, leaseMs, retentionMs, now, label ?? null];
}

export function recordOf(row: Row): KeyRecord {
  const state = oneOf(STATES, row.state, 'state');
  const record: KeyRecord = {
    key: String(row.key),
    state,
    fingerprint: String(row.fingerprint),
    token: num(row, 'token'),
    attempt: num(row, 'attempt'),
    leaseUntil: num(row, 'lease_until_ms'),
    createdAt: num(row, 'created_at_ms'),
    completedAt: state === 'completed' ? num(row, 'completed_at_ms') : undefined,
    expiresAt: num(row, 'expires_at_ms'),
    outcome: state === 'completed' ? outcomeOf(row) : undefined,
  };
  return row.label == null ? record : { ...record, label: String(row.label) };
}

/** The parameters of the complete statement ($1 … $9, see sql/complete.sql), for the plain and transactional paths. */
export function completeValues(
  key: string,
  token: number,
  outcome: StoredOutcome,
  retentionMs: number,
  now: number | null,
): readonly SqlValue[] {
  const { status, headers, body, encoding, storage } = outcome;
  return [key, token, status, JSON.stringify(headers), body, encoding, storage, retentionMs, now];
}
