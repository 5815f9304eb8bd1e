/**
 * @module An outcome and its envelope: how a result is sealed for the store (compressed, inline, in the blob store
 * or not retained) and opened again.
 */
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync } from 'node:zlib';
import { CorruptRecordError, RecordUnreadableError } from './errors.js';
import { sealedKeyId } from './outcome-cipher.js';
import type { BodyEncoding, HeaderPairs, StoredOutcome } from './store.js';

/** An outcome as the caller sees it: plain bytes, before compression or after decompression. */
export interface Outcome {
  /** HTTP status, or 0 for results that are not HTTP responses. */
  readonly status: number;
  readonly headers: HeaderPairs;
  readonly body: Uint8Array;
}

/**
 * Optional home for bodies above `maxBodyBytes` (seed 000's pointer pattern): the record keeps a reference and
 * a replay fetches the bytes back. Without one, such a result is still recorded as completed (the effect must
 * not repeat) but its body is not retained.
 */
export interface BlobStore {
  put(key: string, body: Uint8Array): Promise<string>;
  get(reference: string): Promise<Uint8Array | undefined>;
}

export interface EnvelopeOptions {
  /** Bodies of at least this many bytes are compressed with brotli. Default 1 KiB. */
  readonly compressAboveBytes: number;
  /** Bodies above this many bytes go to the blob store, or are not retained. Default 1 MiB. */
  readonly maxBodyBytes: number;
  readonly blobStore: BlobStore | undefined;
}

export const defaultEnvelopeOptions: EnvelopeOptions = {
  compressAboveBytes: 1024,
  maxBodyBytes: 1024 * 1024,
  blobStore: undefined,
};

// Quality 4 compresses JSON about as well as gzip -9 at a fraction of the CPU; these bodies are written once
// and read rarely, and the hot path is the request, so speed wins over the last few percent.
const BROTLI_PARAMS = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };

/** Prepares an outcome for the store: compresses large bodies, moves huge ones to the blob store. */
export async function sealOutcome(
  key: string,
  outcome: Outcome,
  options: EnvelopeOptions,
): Promise<StoredOutcome> {
  const sealed = sealInline(outcome, options);
  if (sealed !== undefined) return sealed;
  const reference = await options.blobStore!.put(key, outcome.body);
  const { status, headers } = outcome;
  return { status, headers, body: Buffer.from(reference, 'utf8'), encoding: 'identity', storage: 'blob' };
}

/** The outcome as the store keeps it, for the engine's claims: a promise only when its body goes to the blob store. */
export function seal(
  key: string,
  outcome: Outcome,
  options: EnvelopeOptions,
): StoredOutcome | Promise<StoredOutcome> {
  return sealInline(outcome, options) ?? sealOutcome(key, outcome, options);
}

/**
 * `sealOutcome` without a promise, for every outcome that does not go to the blob store (undefined for one that
 * does): the engine calls this on each request, so the common case costs no extra tick.
 */
export function sealInline(outcome: Outcome, options: EnvelopeOptions): StoredOutcome | undefined {
  const { status, headers, body } = outcome;
  if (body.byteLength > options.maxBodyBytes) {
    if (options.blobStore !== undefined) return undefined;
    return { status, headers, body: new Uint8Array(0), encoding: 'identity', storage: 'omitted' };
  }
  if (body.byteLength >= options.compressAboveBytes) {
    const compressed = brotliCompressSync(body, BROTLI_PARAMS);
    // Incompressible bodies (images, already-compressed data) are kept as they are.
    if (compressed.byteLength < body.byteLength) {
      return { status, headers, body: compressed, encoding: 'br', storage: 'inline' };
    }
  }
  return { status, headers, body, encoding: 'identity', storage: 'inline' };
}

export type OpenedOutcome =
  | { readonly retained: true; readonly outcome: Outcome }
  | { readonly retained: false; readonly status: number; readonly headers: HeaderPairs };

/** The inverse of `sealOutcome`: the original bytes, or word that the body was not retained. */
export async function openOutcome(stored: StoredOutcome, options: EnvelopeOptions): Promise<OpenedOutcome> {
  const opened = openStored(stored, options);
  if (opened !== undefined) return opened;
  const { status, headers } = stored;
  const body = await options.blobStore!.get(Buffer.from(stored.body).toString('utf8'));
  if (body === undefined) return { retained: false, status, headers };
  return { retained: true, outcome: { status, headers, body } };
}

/**
 * `openOutcome` without a promise for every record whose body is not in the blob store (undefined otherwise): the
 * engine's replay. A record sealed by an engine with `encryption` fails closed here when met by one without (a
 * missing option, a deploy that dropped it): replaying its ciphertext would answer garbage. Tools that show
 * records as stored (dashboard, CLI) use `openOutcome`, which shows it as it is.
 */
export function openInline(stored: StoredOutcome, options: EnvelopeOptions): OpenedOutcome | undefined {
  const keyId = sealedKeyId(stored);
  if (keyId !== undefined)
    throw new RecordUnreadableError(
      'unknown-key',
      `the stored outcome is encrypted (key id ${JSON.stringify(keyId)}) and this engine has no encryption option`,
      keyId,
    );
  return openStored(stored, options);
}

function openStored(stored: StoredOutcome, options: EnvelopeOptions): OpenedOutcome | undefined {
  const { status, headers } = stored;
  if (stored.storage === 'omitted') return { retained: false, status, headers };
  if (stored.storage === 'blob') {
    if (options.blobStore !== undefined) return undefined;
    return { retained: false, status, headers };
  }
  return { retained: true, outcome: { status, headers, body: decodeBody(stored.body, stored.encoding) } };
}

function decodeBody(body: Uint8Array, encoding: BodyEncoding): Uint8Array {
  try {
    if (encoding === 'br') return brotliDecompressSync(body);
    if (encoding === 'gzip') return gunzipSync(body);
    return body;
  } catch (cause) {
    throw new CorruptRecordError(`a stored body could not be decompressed (${encoding})`, { cause });
  }
}
