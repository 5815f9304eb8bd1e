/**
 * @module What of a handler's response is stored: which statuses keep the key (the rest release it) and which headers
 * go into the record, one rule for every adapter (never `Set-Cookie` or framing headers).
 */
import type { HeaderPairs } from '../core/store.js';

/**
 * Statuses that describe the request's circumstances rather than its effect, so a retry may well succeed:
 * timeout (408), conflict (409, our own in-flight answer included), too large (413), unsupported media type
 * (415), too early (425), rate limited (429). Storing one would make every retry repeat it.
 */
const TRANSIENT_CLIENT_ERRORS: ReadonlySet<number> = new Set([408, 409, 413, 415, 425, 429]);

/** Decides from a response status whether the outcome is kept for the key (true) or the key released (false). */
export type KeepStatus = (status: number) => boolean;

/**
 * The default outcome policy (Stripe's practice): keep every answer below 500 (2xx, a 303 after a
 * POST, deterministic 4xx) except the transient client errors above; release on 5xx so the client may retry.
 * With `keepServerErrors`, 5xx is kept too (Stripe's choice for a 500 after an effect may have happened).
 */
export function defaultKeepStatus(keepServerErrors: boolean): KeepStatus {
  return (status) => {
    if (TRANSIENT_CLIENT_ERRORS.has(status)) return false;
    return status < 500 || keepServerErrors;
  };
}

/**
 * Headers that frame one message on one connection (RFC 9110 §7.6.1, RFC 9112 §6): storing them would corrupt a
 * replay, so they are never kept. `Content-Length` is recomputed from the stored body when it is sent.
 */
export const FRAMING_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
]);

/**
 * Never stored, whatever `keepHeaders` says (the option refuses it at construction too): a replay would hand one
 * client's cookies, its session, to whoever retries with the key.
 */
export const SET_COOKIE = 'set-cookie';

/**
 * Kept only when the `keepHeaders` option names them: the remaining hop-by-hop headers; `Date` (a replay otherwise
 * gets a fresh one); and `X-Powered-By`, a framework's banner rather than the handler's response (a replay gets
 * the framework's own where it is enabled). Every adapter's stored headers pass through here, so one rule holds for
 * all of them, whichever part of the app set the header.
 */
const STORED_ONLY_WHEN_ASKED: ReadonlySet<string> = new Set([
  'proxy-authenticate',
  'proxy-authorization',
  'date',
  'x-powered-by',
]);

/**
 * The headers of a response that go into the stored outcome: content headers and the handler's own, never
 * hop-by-hop ones (nor those the `Connection` header names), never `Set-Cookie`, and the ones above only when
 * `alsoKeep` lists them. Names are lower case in the result.
 */
export function storableHeaders(headers: HeaderPairs, alsoKeep: ReadonlySet<string>): HeaderPairs {
  let connectionNamed: Set<string> | undefined;
  for (const [name, value] of headers) {
    if (name.toLowerCase() === 'connection') {
      connectionNamed = new Set(value.split(',').map((token) => token.trim().toLowerCase()));
    }
  }
  const kept: [string, string][] = [];
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    if (FRAMING_HEADERS.has(lower) || lower === SET_COOKIE) continue;
    if (connectionNamed?.has(lower) && !alsoKeep.has(lower)) continue;
    if (STORED_ONLY_WHEN_ASKED.has(lower) && !alsoKeep.has(lower)) continue;
    kept.push([lower, value]);
  }
  return kept;
}

/**
 * The headers a response already had when the layer handed control to the handler (set by middleware before it:
 * CORS, a request id), by lower-case name, values joined by a line feed (which no header value holds).
 */
export type HeaderSnapshot = ReadonlyMap<string, string>;

/** A snapshot of `headers`, or undefined when there are none (the common case costs nothing later). */
export function snapshotHeaders(headers: HeaderPairs): HeaderSnapshot | undefined {
  if (headers.length === 0) return undefined;
  return joinedByName(headers);
}

/**
 * The headers of a finished response that the handler produced: those absent from `before`, or whose values it
 * changed. Headers middleware set before the handler and the handler left alone are the request's, not the
 * response's: a replay gets them from its own middleware (its own CORS origin, its own request id).
 */
export function handlerHeaders(headers: HeaderPairs, before: HeaderSnapshot | undefined): HeaderPairs {
  if (before === undefined) return headers;
  const after = joinedByName(headers);
  return headers.filter(([name]) => {
    const lower = name.toLowerCase();
    const previous = before.get(lower);
    return previous === undefined || previous !== after.get(lower);
  });
}

function joinedByName(headers: HeaderPairs): Map<string, string> {
  const joined = new Map<string, string>();
  for (const [name, value] of headers) {
    const lower = name.toLowerCase();
    const previous = joined.get(lower);
    joined.set(lower, previous === undefined ? value : `${previous}\n${value}`);
  }
  return joined;
}
