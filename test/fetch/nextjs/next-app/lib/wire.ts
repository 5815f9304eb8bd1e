/**
 * @module What the test and the Next.js app say to each other. A test case creates an app instance in the server
 * (`POST /harness/apps`: its store and its options), then sends the suite's requests with the instance's id in
 * `x-oncely-test-app`; the instance's handlers report back to the test's own server (ONCELY_HARNESS_URL): a run
 * counted, a gate reached and waited on, a logger line.
 */

/** The request header that names the app instance a request is for. */
export const APP_HEADER = 'x-oncely-test-app';

/** Where the instance's store lives: the same Redis prefix or PostgreSQL schema the test's own store reads. */
export type StoreSpec =
  | { readonly kind: 'redis'; readonly prefix: string; readonly port?: number }
  | { readonly kind: 'postgres'; readonly schema: string }
  | { readonly kind: 'unreachable' };

/**
 * Options as JSON: a function travels as its source (`{ $function }`, self-contained functions only: the suite's
 * `key`, `scope` and `location` are), a logger as `{ $logger: true }` (its lines go back to the test's logger).
 */
export type WireValue =
  | string
  | number
  | boolean
  | null
  | readonly WireValue[]
  | { readonly $function: string }
  | { readonly $logger: true }
  | { readonly [name: string]: WireValue };

export interface AppSpec {
  readonly store: StoreSpec;
  readonly options: { readonly [name: string]: WireValue };
}

/** The callbacks' paths and bodies on the test's server. */
export interface Callbacks {
  /** A handler ran for (route, key): answers `{ n }`, how many times it has. */
  '/bump': { readonly app: string; readonly route: string; readonly key: string | null };
  /** A handler waits until the test opens the key's gate (`arrive`: it says it reached it first). */
  '/gate': { readonly app: string; readonly key: string; readonly arrive: boolean };
  /** The layer told its logger something. */
  '/warn': { readonly app: string; readonly message: string };
}
