/**
 * @module Request bodies made replayable once, before the first attempt, so every retry sends exactly the bytes and
 * `Content-Type` the first one sent (a stream reads once, `FormData` draws a new boundary each time).
 */
import { BodyNotReplayableError } from './errors.js';

/** A body every attempt can send again, byte for byte, and the media type fetch would have derived for it. */
export interface ReplayableBody {
  readonly bytes: Uint8Array<ArrayBuffer> | null;
  readonly contentType: string | null;
}

const NO_BODY: ReplayableBody = { bytes: null, contentType: null };

/**
 * Turns any fetch body into bytes once, before the first attempt, so that every retry sends exactly what the first
 * attempt sent. Sending the original again is not enough:
 * - a `ReadableStream` (or an async iterable, which Node's fetch takes) can be read once;
 * - `FormData` gets a new random multipart boundary each time fetch serializes it, so its bytes differ on every
 *   attempt and a server that fingerprints the body (oncely's default) answers the retry 422 `key-reused`;
 * - `URLSearchParams`, `ArrayBuffer` and typed arrays are mutable: the caller may change them between attempts.
 * The bytes and the `Content-Type` are the ones fetch would send: the common kinds are copied as the Fetch
 * standard's "extract a body" would (about 150 µs less per call than going through a Request and its stream); the
 * Request constructor serializes the rest (FormData, streams). A stream is read up to `maxStreamBytes`; the other
 * kinds are in memory already.
 */
export async function replayableBody(
  body: BodyInit | null | undefined,
  maxStreamBytes: number,
): Promise<ReplayableBody> {
  if (body === null || body === undefined) return NO_BODY;
  const copied = await copiedBody(body);
  if (copied !== undefined) return copied;
  // Node's fetch also takes an async iterable (a `Readable`): one-shot like a stream.
  const stream = body instanceof ReadableStream || Symbol.asyncIterator in Object(body);
  let probe: Request;
  try {
    // The URL is never fetched. `duplex` is required for a stream body (and ignored otherwise); the DOM typings of
    // TypeScript 5.9 do not know the option yet.
    probe = new Request('http://body.invalid/', { method: 'POST', body, duplex: 'half' } as RequestInit);
  } catch (error) {
    if (stream) {
      throw new BodyNotReplayableError('used', 'the request body stream was read or locked before the call', {
        cause: error,
      });
    }
    throw error;
  }
  const contentType = probe.headers.get('content-type');
  if (probe.body === null) return { bytes: new Uint8Array(0), contentType };
  const bytes = await readAll(probe.body, stream ? maxStreamBytes : Number.POSITIVE_INFINITY);
  return { bytes, contentType };
}

/** The body kinds whose bytes and media type the Fetch standard defines directly, copied; undefined for the rest. */
async function copiedBody(body: BodyInit): Promise<ReplayableBody | undefined> {
  if (typeof body === 'string') {
    return { bytes: new TextEncoder().encode(body), contentType: 'text/plain;charset=UTF-8' };
  }
  if (body instanceof URLSearchParams) {
    const bytes = new TextEncoder().encode(body.toString());
    return { bytes, contentType: 'application/x-www-form-urlencoded;charset=UTF-8' };
  }
  if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body.slice(0)), contentType: null };
  if (ArrayBuffer.isView(body)) {
    const bytes = new Uint8Array(body.byteLength);
    bytes.set(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
    return { bytes, contentType: null };
  }
  if (body instanceof Blob) {
    return {
      bytes: new Uint8Array(await body.arrayBuffer()),
      contentType: body.type === '' ? null : body.type,
    };
  }
  return undefined;
}

async function readAll(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel();
      throw new BodyNotReplayableError(
        'too-large',
        `the request body stream is over maxStreamBytes (${limit} bytes); every attempt must send the same bytes, so a stream is read into memory first: raise maxStreamBytes, or send a smaller body`,
      );
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
