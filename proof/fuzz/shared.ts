// What the fuzz's app servers (proof/fuzz/server.ts) and its driver (proof/fuzz.ts) agree on.

export const ADAPTERS = ['express', 'fastify', 'hono', 'node'] as const;
export type Adapter = (typeof ADAPTERS)[number];

export interface FuzzServerConfig {
  readonly adapter: Adapter;
  readonly redisUrl: string;
  readonly prefix: string;
}

/** Statuses `/status/:code` answers with: every class a handler may use, never a 5xx (the fuzz counts those). */
export const HANDLER_STATUSES = [200, 201, 202, 204, 301, 400, 404, 408, 409, 410, 422, 429] as const;

/** The methods the layer handles: the fuzz also sends others, which must pass through untouched. */
export const HANDLED: readonly string[] = ['POST', 'PATCH', 'PUT', 'DELETE'];

/** Request bodies above this are refused (413) by every app and by the layer. */
export const MAX_BODY_BYTES = 64 * 1024;

/** The header every handler answers with: the storage key its claim holds (stored and replayed with the rest). */
export const KEY_HEADER = 'x-fuzz-key';

/** The request header that names each generated request; handlers report `{"claim": key, "id": id}` on stdout. */
export const ID_HEADER = 'x-fuzz-id';

/** The default outcome policy (docs/http.md): these handler answers are stored, the others release the key. */
export const isKept = (status: number): boolean =>
  status < 500 && ![408, 409, 413, 415, 425, 429].includes(status);
