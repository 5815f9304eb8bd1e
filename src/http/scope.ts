/**
 * @module The request as the framework-free policy sees it (`RequestView`, shared by every adapter) and the
 * default scope read from it: method, route and the client's identity headers.
 */

/** A request's headers as a plain object by lower-case name, as Node keeps them (`IncomingMessage.headers`). */
export type HeaderObject = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * What the adapter knows about a request before the handler runs, framework-free. `request` is the framework's
 * own request object, handed to the user's `scope` and `fingerprint` functions.
 */
export interface RequestView<Req> {
  readonly request: Req;
  /** Upper case, as the client sent it. */
  readonly method: string;
  /** The route's template (`/orders/:id`) when the framework knows it, otherwise undefined. */
  readonly route: string | undefined;
  /** The request target: path and query, as sent. */
  readonly target: string;
  /** A header's value by lower-case name, or undefined (repeated lines joined by ", "). */
  header(name: string): string | undefined;
  /**
   * The headers as a plain object, where the adapter holds them so (Node's `IncomingMessage.headers`): the default
   * scope reads its six identity headers from it without a call each. Absent where headers sit behind a call (a
   * Web `Request`, a Lambda event's lines): `header()` serves then. Either way a header reads the same.
   */
  readonly headers?: HeaderObject | undefined;
  /**
   * True when the header (lower-case name) came on more than one line, where the adapter can tell (Node's
   * `rawHeaders`); absent where it cannot (a Web `Request` joins the lines).
   */
  readonly repeated?: ((name: string) => boolean) | undefined;
  /** The body as the client sent it, when the adapter has the bytes. */
  readonly bodyBytes: Uint8Array | undefined;
  /** The body as a framework's parser decoded it, when there is no byte copy (Express, Fastify). */
  readonly parsedBody: unknown;
}

/** A function deriving the scope from a request; the scope and the key together name one record. */
export type ScopeFunction<Req> = (request: Req) => string;

/**
 * Request headers that carry an API key or token in common APIs. With `Authorization` and session cookies they are
 * the identity carriers of the default scope.
 */
export const API_KEY_HEADERS = ['x-api-key', 'api-key', 'x-auth-token', 'x-access-token'] as const;

/**
 * Cookie names that hold a session or a credential in common frameworks (`connect.sid`, `sessionid`, `PHPSESSID`,
 * `JSESSIONID`, `next-auth.session-token`, `appSession`, `auth_token`, `jwt`, …), and the CSRF cookies that look like
 * them but are reissued per response, so they must not split one client's retries.
 */
const SESSION_COOKIE = /sess|sid|auth|token|jwt|login/i;
const NOT_IDENTITY_COOKIE = /csrf|xsrf/i;

/** Why a default scope named no client, for the one-time notices. */
export interface ScopeNotices {
  /**
   * A keyed request carried no identity at all: every client shares the key space of the route. Undefined once
   * said (a notice is said once per factory).
   */
  anonymous: ((route: string) => void) | undefined;
  /** A keyed request was scoped by its whole Cookie header: a cookie that changes between retries splits them. */
  wholeCookie: ((route: string) => void) | undefined;
}

/**
 * The default scope: method, route and the client's identity, so one client can never replay another's response
 * and one key used on two routes names two records. The identity is what the request carries of the common
 * identity carriers: `Authorization`, an API-key header (`API_KEY_HEADERS`), and the session cookies (by name, the
 * other cookies left out so that a load balancer's or an analytics cookie that changes between retries does not
 * split them). A Cookie header with no session-like cookie, on a request that carries nothing else, counts whole.
 * Credentials are never stored: the scope only feeds the SHA-256 that becomes the storage key (`scopedKey`).
 * A request with `Authorization` alone (or nothing) has the scope `<method> <route>\n<authorization>`.
 */
export function defaultScope<Req>(view: RequestView<Req>): string {
  return scopeOf(view, undefined);
}

/** The default scope, telling `notices` when a request's identity is missing or only its whole Cookie header. */
export function defaultScopeWith(notices: ScopeNotices): <Req>(view: RequestView<Req>) => string {
  return (view) => scopeOf(view, notices);
}

function scopeOf<Req>(view: RequestView<Req>, notices: ScopeNotices | undefined): string {
  const route = view.route ?? pathOf(view.target);
  const { headers } = view;
  let identity = identityHeader(view, headers, 'authorization') ?? '';
  let identified = identity !== '';
  for (const name of API_KEY_HEADERS) {
    const value = identityHeader(view, headers, name);
    if (value === undefined) continue;
    identity += `\n${name}: ${value}`;
    identified = true;
  }
  const cookie = identityHeader(view, headers, 'cookie');
  if (cookie !== undefined && cookie !== '') {
    const sessions = sessionCookies(cookie);
    if (sessions !== '') identity += `\ncookie: ${sessions}`;
    else if (!identified) {
      identity += `\ncookie*: ${cookie}`;
      notices?.wholeCookie?.(route);
    }
  } else if (!identified) notices?.anonymous?.(route);
  return `${view.method} ${route}\n${identity}`;
}

/** A header as `view.header` reads it, from the view's plain header object when it has one. */
function identityHeader<Req>(
  view: RequestView<Req>,
  headers: HeaderObject | undefined,
  name: string,
): string | undefined {
  if (headers === undefined) return view.header(name);
  const value = headers[name];
  return typeof value === 'object' ? value.join(', ') : value;
}

/** The session-like cookies of a Cookie header as `name=value` pairs, sorted by name and joined; '' if none. */
export function sessionCookies(header: string): string {
  let found: string[] | undefined;
  for (const part of header.split(';')) {
    const pair = part.trim();
    const equals = pair.indexOf('=');
    const name = equals === -1 ? pair : pair.slice(0, equals);
    if (!SESSION_COOKIE.test(name) || NOT_IDENTITY_COOKIE.test(name)) continue;
    if (found === undefined) found = [pair];
    else found.push(pair);
  }
  if (found === undefined) return '';
  return found.length === 1 ? found[0]! : found.sort().join('; ');
}

/**
 * Method and route template, or the method alone: the name a request's scope goes by where people read it (spans,
 * metrics, diagnostics messages, a record's label). Low-cardinality: never a path, which may hold ids, nor an
 * identity.
 */
export function routeLabel(method: string, route: string | undefined): string {
  return route === undefined ? method : `${method} ${route}`;
}

/** The scope of `scope: 'global'`: the key alone names the record, whatever the route or the client. */
export const GLOBAL_SCOPE = 'global';

/** The path of a request target, without its query. */
export function pathOf(target: string): string {
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/** Says once, at construction, that a global scope shares records across routes and clients. */
export function warnGlobalScope(adapter: string): void {
  const message = `oncely/${adapter}: scope 'global' lets any client that knows a key replay the response stored under it, on any route. Use it only when keys are unguessable and responses hold nothing private.`;
  const emit = (globalThis as { process?: { emitWarning?: (message: string, type: string) => void } }).process
    ?.emitWarning;
  if (typeof emit === 'function') emit(message, 'OncelyGlobalScopeWarning');
  else console.warn(message);
}
