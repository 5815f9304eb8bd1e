/**
 * @module How a request is fingerprinted (`bytes`, `canonical-json` or the route's function): the hash that tells a
 * retry of the same request from another request reusing its key (422).
 */
import * as crypto from 'node:crypto';
import { canonicalJson } from '../core/fingerprint.js';
import type { RequestView } from './scope.js';

/**
 * How a request is fingerprinted. `bytes` (default): method, target, media type and the body's exact bytes, so
 * any change of payload is a mismatch. `canonical-json`: the same with the body as canonical JSON, so key order and
 * whitespace do not matter. A function: whatever it returns, hashed as canonical JSON with method and target.
 */
export type FingerprintMode<Req> = 'bytes' | 'canonical-json' | ((request: Req) => unknown);

const EMPTY = new Uint8Array(0);
const oneShotHash = (
  crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'base64url') => string }
).hash;

/**
 * The fingerprint of a request under `mode`: SHA-256 (base64url) over `<method>\n<target>\n<media type>\n<body>`
 * (a function's value takes the place of media type and body). Neither a method, a request target nor a header
 * value can hold a line feed, so the framing is unambiguous without length prefixes. The media type counts because
 * the same bytes mean another request under another one (and a framework's parser may decode both to one value).
 */
export function requestFingerprint<Req>(view: RequestView<Req>, mode: FingerprintMode<Req>): string {
  if (typeof mode === 'function')
    return digest(`${view.method}\n${view.target}\n`, canonicalJson(mode(view.request)));
  const head = `${view.method}\n${view.target}\n${mediaType(view.header('content-type'))}\n`;
  if (mode === 'canonical-json') return digest(head, canonicalBody(view));
  return digest(head, view.bodyBytes ?? serializedParsedBody(view.parsedBody));
}

/**
 * The media type of a `Content-Type` value, normalized (RFC 9110 §8.3.1: type and subtype are case-insensitive;
 * parameters such as `charset` do not make another request): `Text/Plain; charset=utf-8` is `text/plain`.
 */
export function mediaType(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  const semicolon = contentType.indexOf(';');
  const type = semicolon === -1 ? contentType : contentType.slice(0, semicolon);
  return type.trim().toLowerCase();
}

function digest(head: string, body: string | Uint8Array): string {
  if (oneShotHash === undefined)
    return crypto.createHash('sha256').update(head).update(body).digest('base64url');
  if (typeof body === 'string') return oneShotHash('sha256', head + body, 'base64url');
  // The same bytes as the two updates above, hashed in one call: half the time of a Hash object for the small
  // bodies of most requests, for the cost of one copy of the body.
  const headBytes = Buffer.byteLength(head);
  const whole = Buffer.allocUnsafe(headBytes + body.byteLength);
  whole.write(head, 0, 'utf8');
  whole.set(body, headBytes);
  return oneShotHash('sha256', whole, 'base64url');
}

/**
 * Frameworks that parse the body before the middleware runs keep no copy of its bytes; then the parsed value
 * re-serialized stands in (JSON.parse keeps key order, so a changed payload still changes it).
 */
function serializedParsedBody(parsed: unknown): Uint8Array | string {
  if (parsed === undefined || parsed === null) return EMPTY;
  if (typeof parsed === 'string') return parsed;
  if (parsed instanceof Uint8Array) return parsed;
  return JSON.stringify(parsed) ?? '';
}

function canonicalBody<Req>(view: RequestView<Req>): Uint8Array | string {
  if (view.bodyBytes !== undefined) return canonicalText(view.bodyBytes);
  const parsed = view.parsedBody;
  if (parsed === undefined || parsed === null || typeof parsed === 'string' || parsed instanceof Uint8Array) {
    return canonicalText(parsed);
  }
  return canonicalJson(parsed);
}

/** Text or bytes that hold JSON become canonical JSON; anything else is hashed as it is. */
function canonicalText(body: string | Uint8Array | null | undefined): Uint8Array | string {
  if (body === undefined || body === null) return EMPTY;
  if (body.length === 0) return body;
  const text =
    typeof body === 'string'
      ? body
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  try {
    return canonicalJson(JSON.parse(text));
  } catch {
    return body;
  }
}
