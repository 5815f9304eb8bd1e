/**
 * @module The MySQL outbox's rows as the relay and the dead-letter functions read them: UTF-8 bytes to text, BIGINT
 * (a string from mysql2, a BigInt from mariadb) to a number or to digits, epoch milliseconds to dates.
 */
import type { Row } from '../../../stores/mysql/driver.js';
import type { ClaimedRow, DeadLetter } from '../backend.js';

/** Text stored as UTF-8 bytes (or handed over as a string by a driver configured to decode). */
export function textOf(value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  return String(value);
}

export const optionalText = (value: unknown): string | null =>
  value === null || value === undefined ? null : textOf(value);

export const numberOf = (value: unknown): number => Number(value ?? 0);

/** An outbox id (BIGINT UNSIGNED) as digits, exactly. */
export const idOf = (value: unknown): string => String(value);

export function bytesOf(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return Buffer.from(String(value), 'utf8');
}

const headersOf = (value: unknown): Record<string, string> =>
  JSON.parse(textOf(value)) as Record<string, string>;

/** A row claim-lock.sql locked, with the attempt the claim counts. */
export function claimedRowOf(row: Row): ClaimedRow {
  return {
    id: idOf(row.id),
    topic: textOf(row.topic),
    key: optionalText(row.key),
    payload: bytesOf(row.payload),
    content_type: textOf(row.content_type),
    headers: headersOf(row.headers),
    attempts: numberOf(row.attempts) + 1,
    created_at: new Date(numberOf(row.created_at_ms)),
  };
}

export function deadLetterOf(row: Row): DeadLetter {
  return {
    id: idOf(row.id),
    topic: textOf(row.topic),
    key: optionalText(row.key),
    payload: bytesOf(row.payload),
    contentType: textOf(row.content_type),
    headers: headersOf(row.headers),
    attempts: numberOf(row.attempts),
    createdAt: new Date(numberOf(row.created_at_ms)),
    deadAt: new Date(numberOf(row.dead_at_ms)),
    lastError: optionalText(row.last_error),
  };
}
