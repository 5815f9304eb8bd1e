/**
 * @module A web-standard `Request` as the framework-free policy sees it (`WebRequestView`), and its body read for
 * the fingerprint without spending it: the handler still reads the same `Request` object (a Next.js `NextRequest`,
 * Bun's or Deno's own) as if the layer had not been there.
 */
import type { RequestView } from '../scope.js';

const EMPTY = new Uint8Array(0);

/**
 * The request body, whole, when it is at most `limit` bytes; `undefined` when it is larger (told by an honest
 * `Content-Length` before anything is read, or by counting as it arrives). Read from a clone, so the request's own
 * body stays unread for the handler, whose `request.json()` works as without the layer.
 */
export async function readRequestBody(request: Request, limit: number): Promise<Uint8Array | undefined> {
  if (Number(request.headers.get('content-length')) > limit) return undefined;
  if (request.body === null) return EMPTY;
  const reader = request.clone().body!.getReader();
  const chunks: Uint8Array[] = [];
  let held = 0;
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    held += next.value.byteLength;
    if (held > limit) {
      // The rest is never read, the handler never runs. Not awaited: a branch of a teed body settles its cancel
      // only once the other branch (the request's own, which nobody reads now) is cancelled too.
      reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(next.value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(held);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/** A `Request` with its body's bytes, for the key, scope and fingerprint. One object per request. */
export class WebRequestView implements RequestView<Request> {
  readonly method: string;
  readonly target: string;
  readonly parsedBody = undefined;

  constructor(
    readonly request: Request,
    readonly bodyBytes: Uint8Array,
    /** The route's template when the caller named it (`/orders/[id]`); the path is used otherwise. */
    readonly route: string | undefined,
  ) {
    const url = request.url;
    // Path and query as sent, without the cost of a URL object: the URL is absolute in a web Request.
    const pathStart = url.indexOf('/', url.indexOf('//') + 2);
    const hash = url.indexOf('#');
    this.method = request.method;
    this.target = pathStart === -1 ? '/' : url.slice(pathStart, hash === -1 ? undefined : hash);
  }

  header(name: string): string | undefined {
    return this.request.headers.get(name) ?? undefined;
  }
}
