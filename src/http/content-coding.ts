/**
 * @module A handler's response stored without the content coding compression middleware applied for the request
 * at hand (gzip, deflate, br, zstd undone, bounded in size), so every replay is readable whatever its
 * `Accept-Encoding` and is encoded again on its own path.
 */
import * as zlib from 'node:zlib';
import type { HeaderPairs } from '../core/store.js';

type Decoder = (body: Uint8Array, options: zlib.ZlibOptions & zlib.BrotliOptions) => Buffer;

const zstdDecompressSync = (zlib as { zstdDecompressSync?: Decoder }).zstdDecompressSync;

const DECODERS: Readonly<Record<string, Decoder>> = {
  gzip: zlib.gunzipSync,
  'x-gzip': zlib.gunzipSync,
  // RFC 9110 §8.4.1.2: zlib-wrapped; some servers send it raw, which inflateSync refuses.
  deflate: (body, options) => {
    try {
      return zlib.inflateSync(body, options);
    } catch {
      return zlib.inflateRawSync(body, options);
    }
  },
  br: zlib.brotliDecompressSync,
  ...(zstdDecompressSync === undefined ? {} : { zstd: zstdDecompressSync }),
};

/**
 * A response as the handler produced it, before a content coding that compression middleware (or the handler)
 * applied for the request at hand: the body decoded and `Content-Encoding` dropped. Stored that way, every replay
 * is readable whatever its `Accept-Encoding`, and compression middleware on the replay's path encodes it for that
 * request. Undefined when there is nothing to decode, or a coding this process cannot undo (kept as it is).
 */
export function withoutContentCoding(
  headers: HeaderPairs,
  body: Uint8Array,
  maxOutputBytes: number,
): { readonly headers: HeaderPairs; readonly body: Uint8Array } | undefined {
  let coding: string | undefined;
  for (const [name, value] of headers) if (name === 'content-encoding') coding = value;
  if (coding === undefined) return undefined;
  // Codings are listed in the order they were applied (RFC 9110 §8.4): undo them last first.
  const codings = coding
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .filter((token) => token !== '' && token !== 'identity');
  if (codings.some((token) => DECODERS[token] === undefined)) return undefined;
  let decoded = body;
  try {
    for (const token of codings.reverse())
      decoded = DECODERS[token]!(decoded, { maxOutputLength: maxOutputBytes });
  } catch {
    return undefined;
  }
  return { headers: headers.filter(([name]) => name !== 'content-encoding'), body: decoded };
}
