import * as crypto from 'node:crypto';
import { canonicalJson } from '../core/fingerprint.js';
import type { RequestView } from './scope.js';

/**
 * How a request is fingerprinted. `bytes` (default): method, target and the body's exact bytes, so any change
 * of payload is a mismatch. `canonical-json`: the body as canonical JSON, so key order and whitespace do not
 * matter. A function: whatever it returns, hashed as canonical JSON with method and target.
 */
export type FingerprintMode<Req> = 'bytes' | 'canonical-json' | ((request: Req) => unknown);

const EMPTY = new Uint8Array(0);
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string })
  .hash;

/**
 * The fingerprint of a request under `mode`: SHA-256 (base64url) over `<method>\n<target>\n<body>`. Neither a
 * method nor a request target can hold a line feed, so the framing is unambiguous without length prefixes.
 */
export function requestFingerprint<Req>(view: RequestView<Req>, mode: FingerprintMode<Req>): string {
  const head = `${view.method}\n${view.target}\n`;
  if (typeof mode === 'function') return digest(head, canonicalJson(mode(view.request)));
  if (mode === 'canonical-json') return digest(head, canonicalBody(view));
  return digest(head, view.bodyBytes ?? serializedParsedBody(view.parsedBody));
}

function digest(head: string, body: string | Uint8Array): string {
  if (typeof body === 'string' && oneShotHash !== undefined)
    return oneShotHash('sha256', head + body, 'base64url');
  return crypto.createHash('sha256').update(head).update(body).digest('base64url');
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
