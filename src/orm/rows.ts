/**
 * @module Rows as an ORM's raw query hands them over, made into the values the PostgreSQL store's row readers
 * expect. Each ORM parses result columns its own way (int8 as a string or a BigInt, bytea as a Buffer, a Uint8Array
 * or `\x…` text, booleans as `t`/`f` where a driver leaves them as text), so the columns the store reads are fixed
 * here by name: the store's statements name every column they return.
 */
import type { Row } from '../stores/postgres/rows.js';
import type { RawRow } from './driver.js';

// The whole-number columns of the store's statements (int8 counters and times, int4 status).
const WHOLE_NUMBERS = new Set([
  'token',
  'attempt',
  'status',
  'retry_after_ms',
  'completed_at_ms',
  'lease_until_ms',
  'created_at_ms',
  'expires_at_ms',
  'now_ms',
  'body_bytes',
  'removed',
]);
const BOOLEANS = new Set(['held', 'existed', 'taken_over', 'marked']);
const BYTES = new Set(['body']);

/** One raw row with the store's columns as the store's readers expect them; other columns pass unchanged. */
export function normalizeRow(raw: RawRow): Row {
  const row: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(raw)) row[column] = normalizeValue(column, value);
  return row;
}

function normalizeValue(column: string, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (WHOLE_NUMBERS.has(column) && typeof value === 'string') return Number(value);
  if (BOOLEANS.has(column) && typeof value === 'string') return value === 't' || value === 'true';
  if (BYTES.has(column)) return bytesOf(value);
  return value;
}

function bytesOf(value: unknown): unknown {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string' && value.startsWith('\\x'))
    return new Uint8Array(Buffer.from(value.slice(2), 'hex'));
  return value;
}
