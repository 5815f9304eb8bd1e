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
 * The default scope (DESIGN §6): method, route and the `Authorization` header, so one client can never replay
 * another's response and one key used on two routes names two records. The credential is never stored: the
 * scope only feeds the SHA-256 that becomes the storage key (`scopedKey`).
 */
export function defaultScope<Req>(view: RequestView<Req>): string {
  const route = view.route ?? pathOf(view.target);
  return `${view.method} ${route}\n${view.header('authorization') ?? ''}`;
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
