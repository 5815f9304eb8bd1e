/**
 * @module `oncely/dashboard`, which requests are the dashboard's: the path below `basePath`, read from the
 * request-target exactly as the application's router and its guards read it.
 */

export interface RequestTarget {
  /** The path as sent: not decoded, no dot segment resolved, no slash merged. */
  readonly pathname: string;
  readonly query: URLSearchParams;
}

/**
 * Splits a node:http request-target at its `?`. Never `new URL(target, base)`: that reads `//x/ops/…` as host
 * `x` and path `/ops/…`, turns `\` into `/` and resolves `/./` and `/../`, while Express and a prefix guard beside
 * the dashboard see the target as sent; the dashboard would then answer a request the guard never looked at.
 * Comparing the raw path can only make the dashboard claim fewer requests than the router, never more.
 */
export function splitTarget(target: string): RequestTarget {
  const mark = target.indexOf('?');
  if (mark === -1) return { pathname: target, query: new URLSearchParams() };
  return { pathname: target.slice(0, mark), query: new URLSearchParams(target.slice(mark + 1)) };
}

/** The path below the mount point ('' for the page itself), or undefined when the request is not the dashboard's. */
export function below(basePath: string, pathname: string): string | undefined {
  if (basePath === '') return pathname === '/' ? '' : pathname;
  if (pathname === basePath) return '';
  // The slash matters: `/ops/oncely-metrics` is the application's, not a page of `/ops/oncely`.
  return pathname.startsWith(`${basePath}/`) ? pathname.slice(basePath.length) : undefined;
}
