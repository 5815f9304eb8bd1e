/**
 * @module Encryption at rest, the plaintext: a whole stored outcome (status, encoding, storage, headers, body) as
 * one byte string, so that all of it is sealed, not the body alone (a `Location` or a custom header can carry an
 * id or a name as surely as the body).
 *
 *   u16 status · u8 encoding | storage << 4 · u32 header count · per header: u32 length + name, u32 length + value
 *   · the body, the rest
 */
import type { BodyEncoding, BodyStorage, StoredOutcome } from './store.js';

const ENCODINGS: readonly BodyEncoding[] = ['identity', 'gzip', 'br'];
const STORAGES: readonly BodyStorage[] = ['inline', 'blob', 'omitted'];

/** The outcome as bytes, ready to be encrypted. */
export function outcomeToBytes(outcome: StoredOutcome): Buffer {
  const { status, headers, body } = outcome;
  const texts: Buffer[] = [];
  let size = 7 + body.byteLength;
  for (const [name, value] of headers) {
    const n = Buffer.from(name, 'utf8');
    const v = Buffer.from(value, 'utf8');
    texts.push(n, v);
    size += 8 + n.length + v.length;
  }
  const out = Buffer.allocUnsafe(size);
  out.writeUInt16BE(status, 0);
  out[2] = ENCODINGS.indexOf(outcome.encoding) | (STORAGES.indexOf(outcome.storage) << 4);
  out.writeUInt32BE(headers.length, 3);
  let at = 7;
  for (const text of texts) {
    out.writeUInt32BE(text.length, at);
    at += 4 + text.copy(out, at + 4);
  }
  out.set(body, at);
  return out;
}

/** The inverse of `outcomeToBytes`; undefined when the bytes are not such an outcome. */
export function outcomeFromBytes(bytes: Buffer): StoredOutcome | undefined {
  if (bytes.length < 7) return undefined;
  const encoding = ENCODINGS[bytes[2]! & 0x0f];
  const storage = STORAGES[bytes[2]! >> 4];
  if (encoding === undefined || storage === undefined) return undefined;
  const count = bytes.readUInt32BE(3);
  const headers: (readonly [string, string])[] = [];
  let at = 7;
  for (let i = 0; i < count; i++) {
    const name = text(bytes, at);
    if (name === undefined) return undefined;
    const value = text(bytes, name.end);
    if (value === undefined) return undefined;
    headers.push([name.text, value.text]);
    at = value.end;
  }
  return { status: bytes.readUInt16BE(0), headers, body: bytes.subarray(at), encoding, storage };
}

function text(bytes: Buffer, at: number): { readonly text: string; readonly end: number } | undefined {
  if (at + 4 > bytes.length) return undefined;
  const end = at + 4 + bytes.readUInt32BE(at);
  if (end > bytes.length) return undefined;
  return { text: bytes.toString('utf8', at + 4, end), end };
}
