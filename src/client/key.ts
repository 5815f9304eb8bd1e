/**
 * @module The client's keys: a new one per logical operation (`newKey`), a caller's own checked against the
 * server's rules before anything is sent (`checkKey`, src/core/key-rules.ts, which needs no node:crypto), and the
 * header value that carries a key.
 */
import { v7 } from 'uuid';
import { checkKeyText } from '../core/key-rules.js';

/**
 * A new key for one logical operation: a UUIDv7 (RFC 9562). Its random part makes it unguessable like a v4, and its
 * leading timestamp keeps keys made close together close in a B-tree index, which a server that stores keys in
 * PostgreSQL or logs them in order notices.
 */
export function newKey(): string {
  return v7();
}

/** A caller's own key, checked against what the server accepts before anything is sent. */
export function checkKey(key: string): string {
  return checkKeyText(key);
}

/**
 * The header value for a key. The bare form (`Idempotency-Key: 0190…`) where it reads back as the same key, which
 * is what most servers expect; otherwise the draft's Structured-Field string (`"a,b"`, with `\"` and `\\`
 * escapes): a bare comma would read as two header lines joined, a leading quote as the start of a quoted key, and
 * spaces at either end are trimmed by every HTTP parser.
 */
export function keyHeaderValue(key: string): string {
  const bare = !key.includes(',') && !key.startsWith('"') && key.trim() === key;
  return bare ? key : `"${key.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}
