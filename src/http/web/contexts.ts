/**
 * @module Where a web-standard handler finds its idempotency context: by its own `Request` object. The signature of
 * a route handler is the runtime's (`(request, { params })` in Next.js, `(request, server)` in Bun,
 * `(request, info)` in Deno), so the context cannot be another argument; it is looked up by the request instead.
 */
import type { IdempotencyContext } from '../context.js';

// Weak: a context lives as long as its request, with nothing to clean up after the response.
const contexts = new WeakMap<Request, IdempotencyContext<Response>>();

/** Attaches the context of the claim a request won, for `idempotencyOf`. */
export function attachContext(request: Request, context: IdempotencyContext<Response>): void {
  contexts.set(request, context);
}

/**
 * The idempotency context of a request while it owns its key: `key`, fencing `token`, `signal`, `transaction`,
 * `skipStorage()`, `retainFor(ms)`, `defer(work)`. Undefined for a request the layer let through (a safe method, no
 * key where none is required, a store down with `failOpen`), and for any other `Request` object than the one the
 * wrapped handler or the middleware's `next` was given (a copy made with `new Request(request)` or `clone()`).
 *
 * @example
 * import { idempotencyOf, withIdempotency } from 'oncely/fetch';
 *
 * export const POST = withIdempotency(async (request: Request) => {
 *   const token = idempotencyOf(request)?.token;
 *   return Response.json({ token }, { status: 201 });
 * }, { store });
 */
export function idempotencyOf(request: Request): IdempotencyContext<Response> | undefined {
  return contexts.get(request);
}
