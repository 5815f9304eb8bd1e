/**
 * @module The server's side of a key: `validateKey` (the shared rules of key-rules.ts, plus "a key is required")
 * and `scopedKey`, the hashed storage key every store is addressed by. It hashes with node:crypto, which is why
 * oncely/client takes the rules from key-rules.ts and not from here.
 */
import * as crypto from 'node:crypto';
import { InvalidKeyError } from './errors.js';
import { checkKeyText } from './key-rules.js';

export { MAX_KEY_LENGTH } from './key-rules.js';

/** `crypto.hash` (Node >= 20.12): one-shot hashing, about twice as fast as a Hash object for small inputs. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string })
  .hash;

/**
 * Checks a caller-supplied idempotency key: present, and 1 to 255 printable ASCII characters (no control
 * characters, no bytes above 0x7e). Throws `InvalidKeyError` with a reason a client can act on.
 */
export function validateKey(key: unknown): string {
  if (key === undefined || key === null)
    throw new InvalidKeyError('missing', 'an idempotency key is required');
  return checkKeyText(key);
}

/**
 * The storage key for (scope, key): a SHA-256 over both, base64url (43 characters). Hashing bounds the stored
 * size, keeps raw client keys out of the store and its logs, and makes keys of different scopes disjoint, so one
 * client can never replay another's result. The NUL separator cannot occur in a valid key, so no two different
 * (scope, key) pairs collide by concatenation.
 */
export function scopedKey(scope: string, key: string): string {
  if (oneShotHash !== undefined) return oneShotHash('sha256', `${scope}\0${key}`, 'base64url');
  return crypto.createHash('sha256').update(scope).update('\0').update(key).digest('base64url');
}
