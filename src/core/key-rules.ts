/**
 * @module The rules of an idempotency key, in one place for both sides of the protocol: the server's
 * `validateKey` (src/core/key.ts) and the client's `checkKey` (src/client/key.ts). Free of node:crypto and of every
 * other `node:` import, because oncely/client runs in browsers, Deno, Bun and workers too
 * (test/client/web-only.test.ts).
 */
import { InvalidKeyError } from './errors.js';

/** The IETF draft and Stripe cap keys at 255 characters. */
export const MAX_KEY_LENGTH = 255;

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * Checks a key that is there: a string of 1 to 255 printable ASCII characters (no control characters, no bytes
 * above 0x7e). Throws `InvalidKeyError` with a reason a client can act on.
 */
export function checkKeyText(key: unknown): string {
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
