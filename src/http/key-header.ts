/**
 * @module The `Idempotency-Key` header's grammar: the draft's quoted sf-string and the bare form, one line only, the
 * key rules; a malformed value is the client's error (400 `key-malformed`).
 */
import { InvalidKeyError } from '../core/errors.js';
import { MAX_KEY_LENGTH, validateKey } from '../core/key.js';

const DQUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Reads an `Idempotency-Key` header value. Accepts the draft's Structured Field string
 * (draft-ietf-httpapi-idempotency-key-header-07 §2.1, RFC 8941 §3.3.3: `"8e03978e-40d5"`, with `\"` and `\\`
 * escapes) and the common bare form (`8e03978e-40d5`). Either way the key is 1 to 255 printable ASCII
 * characters; an unquoted key holds no comma. Returns undefined when the header is absent; throws
 * `InvalidKeyError` when it is malformed.
 *
 * @example
 * parseKeyHeader('"a\\"b"') // 'a"b'
 * parseKeyHeader('abc')     // 'abc'
 * parseKeyHeader('"abc')    // throws InvalidKeyError (bad-quoting)
 */
export function parseKeyHeader(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const value = trimOws(raw);
  if (value.charCodeAt(0) !== DQUOTE) {
    // RFC 9110 §5.3: a recipient may combine several lines of a field into one value joined by commas, so an
    // unquoted comma cannot be told from two keys. The draft's sf-string (quoted) may hold one.
    if (value.includes(',')) {
      throw new InvalidKeyError(
        'bad-characters',
        'an unquoted idempotency key cannot contain a comma (several Idempotency-Key lines are joined by commas); send one line, and quote a key that holds a comma',
      );
    }
    return validateKey(value);
  }
  return validateKey(parseSfString(value));
}

/**
 * How many lines of header `name` (lower case) a request carried, from Node's `rawHeaders` (name, value, name,
 * value, …). Frameworks join repeated lines into one value; this is how to tell.
 */
export function headerLines(rawHeaders: readonly string[] | undefined, name: string): number {
  if (rawHeaders === undefined) return 0;
  let lines = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const field = rawHeaders[index]!;
    if (field.length === name.length && field.toLowerCase() === name) lines++;
  }
  return lines;
}

/** RFC 8941 §4.2.5: a quoted string, nothing after it (parameters are not part of this header's syntax). */
function parseSfString(value: string): string {
  let key = '';
  for (let index = 1; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code === BACKSLASH) {
      const next = value.charCodeAt(++index);
      if (next !== DQUOTE && next !== BACKSLASH) {
        throw new InvalidKeyError(
          'bad-quoting',
          'only \\" and \\\\ may be escaped in a quoted idempotency key',
        );
      }
      key += value[index];
    } else if (code === DQUOTE) {
      if (index !== value.length - 1) {
        throw new InvalidKeyError(
          'bad-quoting',
          'nothing may follow the closing quote of the idempotency key',
        );
      }
      return key;
    } else if (code < 0x20 || code > 0x7e) {
      throw new InvalidKeyError(
        'bad-characters',
        'the idempotency key must contain printable ASCII characters only',
      );
    } else {
      key += value[index];
    }
    if (key.length > MAX_KEY_LENGTH) {
      throw new InvalidKeyError(
        'too-long',
        `the idempotency key must be at most ${MAX_KEY_LENGTH} characters`,
      );
    }
  }
  throw new InvalidKeyError('bad-quoting', 'the quoted idempotency key has no closing quote');
}

/** Optional whitespace around a field value (RFC 9110 §5.5) is not part of it. */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

const isOws = (code: number) => code === 0x20 || code === 0x09;
