/**
 * @module The request headers a tRPC context carries, whatever the adapter: a Fetch `Headers` (the fetch, Next.js
 * and Hono adapters' `req.headers`) or a Node header object (`IncomingMessage.headers`, the standalone and
 * Express adapters'), read by lower-case name.
 */

/** What `headers(ctx)` may return. */
export type HeaderSource =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** A header's value, repeated lines joined by `, ` as a Fetch `Headers` joins them; undefined when absent. */
export function headerOf(source: HeaderSource | undefined, name: string): string | undefined {
  if (source === undefined || source === null) return undefined;
  if (typeof source.get === 'function')
    return (source as { get(name: string): string | null }).get(name) ?? undefined;
  const value = (source as Readonly<Record<string, string | readonly string[] | undefined>>)[name];
  return typeof value === 'object' ? value.join(', ') : value;
}
