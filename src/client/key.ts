import { v7 } from 'uuid';
import { InvalidKeyError } from '../core/errors.js';

// The rules of src/core/key.ts (validateKey), restated here: that module hashes with node:crypto, and this
// subpath runs in browsers, Deno and Bun as well, so it imports nothing from node:.
const MAX_KEY_LENGTH = 255;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

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
  if (typeof key !== 'string')
    throw new InvalidKeyError('bad-characters', 'the idempotency key must be a string');
  if (key.length === 0) throw new InvalidKeyError('empty', 'the idempotency key must not be empty');
  if (key.length > MAX_KEY_LENGTH) {
    throw new InvalidKeyError('too-long', `the idempotency key must be at most ${MAX_KEY_LENGTH} characters`);
  }
  if (!PRINTABLE_ASCII.test(key)) {
    throw new InvalidKeyError(
      'bad-characters',
      'the idempotency key must contain printable ASCII characters only',
    );
  }
  return key;
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
