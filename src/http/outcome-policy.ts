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
  return storedHeaders(headers, undefined, alsoKeep);
}

/**
 * `storableHeaders` of `handlerHeaders(headers, before)`, in one pass: what a response stores. Nothing is copied
 * until a header is left out or renamed, and then into one array: `headers` itself when every one is kept as it is.
 */
export function storedHeaders(
  headers: HeaderPairs,
  before: HeaderSnapshot | undefined,
  alsoKeep: ReadonlySet<string>,
): HeaderPairs {
  let connectionNamed: Set<string> | undefined;
  for (const [name, value] of headers) {
    if (name.toLowerCase() === 'connection') {
      connectionNamed = new Set(value.split(',').map((token) => token.trim().toLowerCase()));
    }
  }
  let kept: (readonly [string, string])[] | undefined;
  for (let i = 0; i < headers.length; i++) {
    const pair = headers[i]!;
    const [name, value] = pair;
    const lower = name.toLowerCase();
    const dropped =
      FRAMING_HEADERS.has(lower) ||
      lower === SET_COOKIE ||
      (connectionNamed?.has(lower) === true && !alsoKeep.has(lower)) ||
      (STORED_ONLY_WHEN_ASKED.has(lower) && !alsoKeep.has(lower)) ||
      (before !== undefined && sameLines(headers, before, lower));
    if (kept === undefined && (dropped || lower !== name)) kept = headers.slice(0, i);
    // A pair already in lower case is kept as it is (Node's own header names are): no copy per header.
    if (!dropped) kept?.push(lower === name ? pair : [lower, value]);
  }
  return kept ?? headers;
}

/**
 * The headers a response already had when the layer handed control to the handler (set by middleware before it:
 * CORS, a request id), as they were then. Kept as the pairs themselves: there are few (Express sets one), so the
 * comparison below scans them instead of building a map of them and another of the response's on every request.
 */
export type HeaderSnapshot = HeaderPairs;

/** A snapshot of `headers`, or undefined when there are none (the common case costs nothing later). */
export function snapshotHeaders(headers: HeaderPairs): HeaderSnapshot | undefined {
  return headers.length === 0 ? undefined : headers;
}

/**
 * The headers of a finished response that the handler produced: those absent from `before`, or whose values it
 * changed. Headers middleware set before the handler and the handler left alone are the request's, not the
 * response's: a replay gets them from its own middleware (its own CORS origin, its own request id). A repeated
 * header counts as all its lines, in order: one line changed is a change of the header.
 */
export function handlerHeaders(headers: HeaderPairs, before: HeaderSnapshot | undefined): HeaderPairs {
  if (before === undefined) return headers;
  let kept: (readonly [string, string])[] | undefined;
  for (let i = 0; i < headers.length; i++) {
    const pair = headers[i]!;
    const lower = pair[0].toLowerCase();
    const untouched = sameLines(headers, before, lower);
    // Nothing is copied until a header is left out: most responses keep all of theirs.
    if (untouched && kept === undefined) kept = headers.slice(0, i);
    else if (!untouched) kept?.push(pair);
  }
  return kept ?? headers;
}

/** Whether `a` and `b` hold the same lines, in the same order, for the header named `lower` (lower case). */
function sameLines(a: HeaderPairs, b: HeaderPairs, lower: string): boolean {
  let j = 0;
  for (const [name, value] of a) {
    if (name.toLowerCase() !== lower) continue;
    while (j < b.length && b[j]![0].toLowerCase() !== lower) j++;
    if (j === b.length || b[j]![1] !== value) return false;
    j++;
  }
  while (j < b.length && b[j]![0].toLowerCase() !== lower) j++;
  return j === b.length;
}
