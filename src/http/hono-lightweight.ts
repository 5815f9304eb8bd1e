/**
 * @module Reading @hono/node-server's lightweight `Response` without materializing it, with the standard `Response`
 * API as the fallback on every other runtime.
 */
import type { Context } from 'hono';
import type { HttpAnswer } from './problem.js';
import { pairsOf } from './web/body.js';

/**
 * On Node, @hono/node-server answers with a lightweight `Response` that keeps `[status, body, headers]` under a
 * symbol described `cache` until something reads its stream or its `headers`. Read there, a response costs no web
 * stream and no `Headers` object, and node-server still writes it the fast way (a plain header object straight to
 * `writeHead`); reading `response.headers` would turn the plain object into a `Headers` for good. Everything here
 * falls back to the standard `Response` API where there is no such cache (other runtimes, a response already
 * materialized), so the adapter works the same everywhere and is only cheaper on Node.
 */
type Parts = [status: number, body: unknown, headers: unknown];

// node-server's default for a body without a Content-Type, as its `headers` getter reports it.
const DEFAULT_CONTENT_TYPE = 'text/plain; charset=UTF-8';
let cacheSymbol: symbol | undefined;

/** The lightweight response's `[status, body, headers]`, or undefined for any other response. */
export function lightweightParts(response: Response): Parts | undefined {
  const fields = response as unknown as Record<symbol, unknown>;
  if (cacheSymbol !== undefined && Array.isArray(fields[cacheSymbol])) return fields[cacheSymbol] as Parts;
  for (const symbol of Object.getOwnPropertySymbols(response)) {
    if (symbol.description !== 'cache') continue;
    const parts = fields[symbol];
    if (!Array.isArray(parts)) return undefined;
    cacheSymbol = symbol;
    return parts as Parts;
  }
  return undefined;
}

/**
 * A response's headers as pairs, `Set-Cookie` values apart, read without turning a lightweight response's plain
 * header object into a `Headers`.
 */
export function responseHeaderPairs(response: Response): [string, string][] {
  const parts = lightweightParts(response);
  if (parts !== undefined) {
    const init = parts[2];
    if (init === undefined || init === null)
      return parts[1] === null ? [] : [['content-type', DEFAULT_CONTENT_TYPE]];
    const pairs = plainPairs(init as object);
    if (pairs !== undefined) return pairs;
  }
  return pairsOf(response.headers);
}

/**
 * The pairs of a plain header object of string values; undefined for anything else (a `Headers` reads those). Names
 * keep their case here: the stored outcome lower-cases them (`storableHeaders`).
 */
function plainPairs(init: object): [string, string][] | undefined {
  if (init instanceof Headers) return undefined;
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(init)) {
    // An array of pairs, or an array value that only typed-away code puts in an object: `Headers` reads those.
    if (typeof value !== 'string') return undefined;
    pairs.push([name, value]);
  }
  return pairs;
}

/**
 * True when the context is known to carry no headers from middleware: an empty lightweight response made from it
 * has none. False where that cannot be told (off node-server).
 */
function bareContext(c: Context): boolean {
  const parts = lightweightParts(c.newResponse(null));
  return parts !== undefined && (parts[2] === undefined || parts[2] === null);
}

/** The headers middleware before the layer put on the context (CORS, a request id), without making a `Headers`. */
export function contextHeaderPairs(c: Context): [string, string][] {
  return bareContext(c) ? [] : pairsOf(c.newResponse(null).headers);
}

/**
 * The layer's answer as a lightweight response with a plain header object, when nothing is there to merge it with:
 * no middleware headers on the context and one value per header name. Undefined otherwise (and off node-server),
 * where the caller goes through the context instead.
 */
export function plainAnswer(c: Context, answer: HttpAnswer, body: Uint8Array | null): Response | undefined {
  if (!bareContext(c)) return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of answer.headers) {
    if (Object.hasOwn(headers, name)) return undefined;
    headers[name] = value;
  }
  return new Response(body as Uint8Array<ArrayBuffer> | null, { status: answer.status, headers });
}
