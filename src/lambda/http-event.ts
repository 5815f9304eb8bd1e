/**
 * @module An API Gateway or Function URL event read as the HTTP flow reads a request (method, route, target,
 * headers, body bytes) in either payload format, and the default scope of Lambda requests, which takes the principal
 * API Gateway authenticated in place of per-request credentials.
 */
import { InvalidOptionsError } from '../core/errors.js';
import { defaultScopeWith, pathOf, type RequestView, type ScopeNotices } from '../http/scope.js';
import type { HttpApiEvent, HttpEvent, RestApiEvent } from './events.js';

/** Which payload format an event came in, so the layer's own answers go back in the same one. */
export type EventFormat = 'rest' | 'http';

/** An API Gateway or Function URL event as the HTTP flow sees it, plus its raw body bytes. */
export interface ReadEvent<E extends HttpEvent> {
  readonly format: EventFormat;
  readonly view: RequestView<E>;
  readonly body: Uint8Array;
}

const EMPTY = new Uint8Array(0);

/** Reads an event once: method, route, target, headers by lower-case name, body bytes. */
export function readHttpEvent<E extends HttpEvent>(event: E): ReadEvent<E> {
  if (isRestEvent(event)) return readRest(event);
  if (isHttpApiEvent(event)) return readHttpApi(event);
  throw new InvalidOptionsError(
    'oncely/lambda: the event is neither an API Gateway REST (format 1.0) nor an HTTP API / Function URL (format 2.0) event; wrap SQS handlers with sqsIdempotency',
  );
}

function isRestEvent(event: HttpEvent): event is RestApiEvent {
  return typeof (event as Partial<RestApiEvent>).httpMethod === 'string';
}

function isHttpApiEvent(event: HttpEvent): event is HttpApiEvent {
  const { requestContext, rawPath } = event as Partial<HttpApiEvent>;
  return typeof rawPath === 'string' && typeof requestContext?.http?.method === 'string';
}

function readRest<E extends HttpEvent>(event: E & RestApiEvent): ReadEvent<E> {
  const lines = new Map<string, string[]>();
  // multiValueHeaders has every line of every header; `headers` keeps the last line only.
  for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
    if (values !== undefined) append(lines, name, values);
  }
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined && !lines.has(name.toLowerCase())) append(lines, name, [value]);
  }
  const resource = event.resource ?? '';
  const route = resource === '' ? undefined : resource;
  const body = bodyBytes(event.body, event.isBase64Encoded);
  return {
    format: 'rest',
    view: view(event, event.httpMethod, route, restTarget(event), lines, body, true),
    body,
  };
}

function readHttpApi<E extends HttpEvent>(event: E & HttpApiEvent): ReadEvent<E> {
  const lines = new Map<string, string[]>();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) append(lines, name, [value]);
  }
  // Format 2.0 takes the Cookie header out into `cookies`; the default scope reads session cookies from it.
  if (event.cookies !== undefined && event.cookies.length > 0 && !lines.has('cookie')) {
    lines.set('cookie', [event.cookies.join('; ')]);
  }
  const routeKey = event.routeKey ?? '$default';
  const space = routeKey.indexOf(' ');
  const route = space === -1 ? undefined : routeKey.slice(space + 1);
  const query = event.rawQueryString ?? '';
  const target = query === '' ? event.rawPath : `${event.rawPath}?${query}`;
  const body = bodyBytes(event.body, event.isBase64Encoded);
  // Format 2.0 joins repeated lines with commas, like a Fetch Request: the key's comma rule refuses two of them.
  const method = event.requestContext.http.method;
  return { format: 'http', view: view(event, method, route, target, lines, body, false), body };
}

function view<E extends HttpEvent>(
  event: E,
  method: string,
  route: string | undefined,
  target: string,
  lines: ReadonlyMap<string, readonly string[]>,
  body: Uint8Array,
  countsLines: boolean,
): RequestView<E> {
  const header = (name: string) => lines.get(name)?.join(', ');
  return {
    request: event,
    method: method.toUpperCase(),
    route,
    target,
    header,
    repeated: countsLines ? (name) => (lines.get(name)?.length ?? 0) > 1 : undefined,
    bodyBytes: body,
    parsedBody: undefined,
  };
}

function append(lines: Map<string, string[]>, name: string, values: readonly string[]): void {
  const lower = name.toLowerCase();
  const known = lines.get(lower);
  if (known === undefined) lines.set(lower, [...values]);
  else known.push(...values);
}

/** Path and query of a REST event, the query rebuilt from its parameters (format 1.0 has no raw query). */
function restTarget(event: RestApiEvent): string {
  const pairs: string[] = [];
  const multi = event.multiValueQueryStringParameters;
  const single = event.queryStringParameters;
  if (multi) {
    for (const [name, values] of Object.entries(multi))
      for (const value of values ?? []) pairs.push(`${encode(name)}=${encode(value)}`);
  } else if (single) {
    for (const [name, value] of Object.entries(single))
      if (value !== undefined) pairs.push(`${encode(name)}=${encode(value)}`);
  }
  return pairs.length === 0 ? event.path : `${event.path}?${pairs.join('&')}`;
}

const encode = (text: string) => encodeURIComponent(text);

function bodyBytes(body: string | null | undefined, base64: boolean | undefined): Uint8Array {
  if (body === null || body === undefined || body === '') return EMPTY;
  return Buffer.from(body, base64 === true ? 'base64' : 'utf8');
}

/**
 * The default scope of Lambda events: the principal API Gateway authenticated, when it did, in place of the
 * request's credentials. Under IAM auth (SigV4) the `Authorization` header is signed per request, date and all,
 * so a retry carries another one: scoped by it, no retry would ever replay. Without an authorizer's principal the
 * scope is the HTTP adapters' default (method, route, `Authorization`, API-key headers, session cookies).
 */
export function lambdaScope(notices: ScopeNotices): <E extends HttpEvent>(view: RequestView<E>) => string {
  const fallback = defaultScopeWith(notices);
  return (view) => {
    const principal = principalOf(view.request);
    if (principal === undefined) return fallback(view);
    // No default scope starts with this line (they start with the method), so the two never meet.
    return `lambda-principal\n${view.method} ${view.route ?? pathOf(view.target)}\n${principal}`;
  };
}

/** Who API Gateway says sent the request: IAM caller, JWT or Cognito subject, Lambda authorizer principal. */
export function principalOf(event: HttpEvent): string | undefined {
  const context = event.requestContext as
    | { readonly authorizer?: unknown; readonly identity?: RestIdentity | null }
    | undefined;
  const authorizer = record(context?.authorizer);
  const jwt = record(authorizer?.jwt);
  const claims = record(jwt?.claims) ?? record(authorizer?.claims);
  if (typeof claims?.sub === 'string') return `sub:${String(claims.iss ?? '')} ${claims.sub}`;
  const iam = record(authorizer?.iam);
  if (typeof iam?.userArn === 'string') return `iam:${iam.userArn}`;
  if (typeof authorizer?.principalId === 'string' && authorizer.principalId !== '')
    return `principal:${authorizer.principalId}`;
  const identity = context?.identity;
  if (typeof identity?.userArn === 'string') return `iam:${identity.userArn}`;
  if (typeof identity?.cognitoIdentityId === 'string') return `cognito:${identity.cognitoIdentityId}`;
  return undefined;
}

interface RestIdentity {
  readonly userArn?: string | null;
  readonly cognitoIdentityId?: string | null;
}

function record(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
}
