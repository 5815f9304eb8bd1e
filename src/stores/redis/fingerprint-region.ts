/**
 * @module The fingerprint as a Redis record keeps it (layouts 4 to 7): a tag byte, then the first 16 characters of a
 * SHA-256 fingerprint, or any other fingerprint as it is. What `begin-1.lua` is sent and compares byte for byte, and
 * what `get` shows of it.
 */

/** Tag of a SHA-256 fingerprint kept by its first 16 characters (96 bits). */
const SHORT = 126;
/** Tag of a fingerprint of 126 bytes or more (layouts 6 and 7, whose header says the region's length). */
const LONG = 127;
/** Characters kept of a SHA-256 fingerprint. */
const KEPT = 16;
/** What `get` shows after the 16 characters kept, so nobody takes them for the whole fingerprint. */
const CUT = '…';

/**
 * The fingerprint every entry point makes: SHA-256 in base64url without padding, 43 characters, the last one
 * holding 2 zero bits (one of 16 characters), so one string stands for each digest.
 */
const SHA256_BASE64URL = /^[\w-]{42}[AEIMQUYcgkosw048]$/;

// One-character strings of the tags, made once.
const TAGS = Array.from({ length: 128 }, (_, code) => String.fromCharCode(code));

/**
 * The fingerprint region `begin-1.lua` gets as ARGV[1] and a record keeps. Telling two requests apart under one key
 * takes far fewer bits than a SHA-256 has: its first 96 are kept (16 characters instead of 43), so a completed
 * record with a 200-byte body fits Redis' 256-byte allocation class. A chance match of two different requests
 * under the same key is 2^-96; any other fingerprint is kept whole.
 */
export function fingerprintRegion(fingerprint: string): string {
  if (fingerprint.length === 43 && SHA256_BASE64URL.test(fingerprint))
    return TAGS[SHORT] + fingerprint.slice(0, KEPT);
  const bytes = Buffer.byteLength(fingerprint, 'utf8');
  return (bytes < SHORT ? TAGS[bytes] : TAGS[LONG]) + fingerprint;
}

/** What `get` shows of a tagged fingerprint region (`at` its tag byte, `length` the region's length). */
export function fingerprintShown(buf: Buffer, at: number, length: number): string {
  if (buf[at] === SHORT) return buf.toString('latin1', at + 1, at + 1 + KEPT) + CUT;
  return buf.toString('utf8', at + 1, at + length);
}
