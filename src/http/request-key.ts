/**
 * @module The `key` route option: an idempotency key taken from the request itself (a body field such as `orderId`,
 * a route parameter, another header) instead of the `Idempotency-Key` header, for APIs whose clients already send
 * one (the way Powertools' `eventKeyJmesPath` users key their records). The value goes through the same rules as
 * a header's (1 to 255 printable ASCII characters), and the scope and the fingerprint apply to it as to a header.
 */

import { InvalidOptionsError } from '../core/errors.js';
import { checkKeyText } from '../core/key-rules.js';
import { parseJsonBody } from './json-body.js';
import type { RequestView } from './scope.js';

/**
 * Takes the key from a request: the framework's request (Express `req`, Fastify `request`, Hono `Context`, Node
 * `IncomingMessage`, the Lambda event) and its body as JSON where it is JSON (the framework's parsed body, or the
 * layer's parse of the bytes). Returns undefined when the request carries none: the route's `required` decides
 * then (400 `key-missing`, or the handler runs unprotected).
 *
 * @example
 * const key = (_request: unknown, body: unknown) => (body as { orderId?: string } | undefined)?.orderId;
 */
export type KeyFunction<Req> = (request: Req, body: unknown) => string | undefined;

/** Checks the option once, at construction. */
export function resolveKeyFunction<Req>(
  option: unknown,
  inherited: KeyFunction<Req> | undefined,
): KeyFunction<Req> | undefined {
  if (option === undefined) return inherited;
  if (typeof option !== 'function')
    throw new InvalidOptionsError('key must be a function (request, body) => string | undefined');
  return option as KeyFunction<Req>;
}

/**
 * The key a request carries by the route's function: undefined when it has none. A value that is not a key (a
 * number or an object from a client's JSON, an empty or over-long string, a control character) throws
 * `InvalidKeyError`: the client's input, answered 400 like a malformed header. Errors of the function itself are
 * the application's and propagate.
 */
export function keyFromRequest<Req>(view: RequestView<Req>, key: KeyFunction<Req>): string | undefined {
  const value: unknown = key(view.request, bodyOf(view));
  if (value === undefined || value === null) return undefined;
  return checkKeyText(value);
}

/** The body as JSON: the framework's parse where it made one, else the bytes parsed when they are declared JSON. */
function bodyOf<Req>(view: RequestView<Req>): unknown {
  if (view.parsedBody !== undefined) return view.parsedBody;
  if (view.bodyBytes === undefined) return undefined;
  const json = parseJsonBody(view.header('content-type'), view.bodyBytes);
  return json === undefined || json === 'unparseable' ? undefined : json.value;
}
