/**
 * @module Fingerprints and canonical JSON: the length-framed SHA-256 every entry point hashes a request's identity with.
 */
import { createHash } from 'node:crypto';

/** A part of a request that goes into its fingerprint: text or raw bytes. */
export type FingerprintPart = string | Uint8Array;

/**
 * SHA-256 over the parts, each framed by its length, so ("ab", "c") and ("a", "bc") differ. Raw bytes are hashed
 * as they are: the default fingerprint of a request is its exact bytes, so any change of payload is a mismatch.
 */
export function fingerprintOf(parts: readonly FingerprintPart[]): string {
  const hash = createHash('sha256');
  for (const part of parts) {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    hash.update(`${bytes.byteLength}:`);
    hash.update(bytes);
  }
  return hash.digest('base64url');
}

/**
 * JSON with object keys sorted at every depth and no whitespace: two payloads that differ only in key order or
 * formatting get the same text. Values JSON cannot express (functions, symbols) are dropped as JSON.stringify
 * drops them; BigInt is written as its decimal string; non-finite numbers as JSON does (null).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'undefined';
}

function sortKeys(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return sortKeys((value as { toJSON: () => unknown }).toJSON());
  }
  if (Array.isArray(value)) return value.map(sortKeys);
  if (ArrayBuffer.isView(value))
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  const sorted: Record<string, unknown> = {};
  for (const name of Object.keys(value).sort()) {
    sorted[name] = sortKeys((value as Record<string, unknown>)[name]);
  }
  return sorted;
}
