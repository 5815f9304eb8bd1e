/**
 * @module What differs between the GraphQL servers the plugins run on, and nothing else: where a field's resolver
 * finds the headers of the HTTP request that carried its operation, and how an error tells the server which HTTP
 * status and headers to answer with. Everything else (which fields, the key, the record, the engine's walk, the
 * errors' codes) is one code path for every server.
 */

/** The request's headers, by name in any case: a Fetch `Headers`, or Apollo Server's `HeaderMap`. */
export interface RequestHeaders {
  get(name: string): string | null | undefined;
}

export interface ServerBinding {
  /** The plugin factory's name, as a refused option or schema names it (`useIdempotency`, `apolloIdempotency`). */
  readonly name: string;
  /** The headers of the HTTP request behind `context`; undefined when there is none (an operation run in process). */
  headers(context: unknown): RequestHeaders | undefined;
  /**
   * `extensions.http` for an error answered with `status` (and `Retry-After: retryAfter`, in seconds, when given),
   * in the shape this server reads it in: it sets the response's status and headers and drops it from the body.
   */
  http(status: number, retryAfter: number | undefined): unknown;
}
