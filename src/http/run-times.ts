/**
 * @module How long each route's handler typically runs in this process, so a 409's `Retry-After` says when the first
 * request will likely answer rather than when its lease would end.
 */
/** How much a new observation moves the estimate (an exponentially weighted moving average). */
const WEIGHT = 0.3;
// Routes remembered at most: with the layer mounted app-wide and no route template, paths stand in for routes.
const MAX_ROUTES = 1_000;
/** `Retry-After` is whole seconds: a hint under one second still says 1. */
const MIN_HINT_MS = 1_000;

/**
 * How long a route's handler typically runs, as this process observed it: a moving average per route (method and
 * route template, or path), so a duplicate of a 300 ms request is told to come back in a second, not when the
 * holder's 30 s lease would run out.
 */
export class RunTimes {
  readonly #byRoute = new Map<string, number>();

  /** A handler on `route` answered (or failed) `ms` after its request claimed the key. */
  observe(route: string, ms: number): void {
    const previous = this.#byRoute.get(route);
    if (previous !== undefined) {
      // Updated in place: a route stays where it first came in, so the bound below drops the routes seen
      // first rather than those seen least lately. With route templates there are far fewer than the bound; with
      // paths standing in, an active path that is dropped starts its estimate again. Cheaper per request than
      // moving the route to the end.
      this.#byRoute.set(route, previous + WEIGHT * (ms - previous));
      return;
    }
    this.#byRoute.set(route, ms);
    if (this.#byRoute.size > MAX_ROUTES) this.#byRoute.delete(this.#byRoute.keys().next().value!);
  }

  /**
   * When a duplicate should try again: the route's typical run time, at most the time left on the holder's lease
   * (after that another attempt may take the key over), at least a second; a second before any run was observed.
   */
  retryAfterMs(route: string, leaseLeftMs: number): number {
    const typical = this.#byRoute.get(route) ?? MIN_HINT_MS;
    return Math.max(MIN_HINT_MS, Math.min(leaseLeftMs, typical));
  }
}
