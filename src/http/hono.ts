/**
 * @module `oncely/hono`: the Hono middleware, a shell over the framework-free flow that reads the body once, answers
 * through Hono's context and captures the handler's `Response` (cheaply on @hono/node-server's lightweight ones).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { wholeNumber } from '../core/validate.js';
import type { IdempotencyContext } from './context.js';
import { rejected } from './diagnostics.js';
import { HttpIdempotency } from './flow.js';
import {
  contextHeaderPairs,
  lightweightParts,
  plainAnswer,
  responseHeaderPairs,
} from './hono-lightweight.js';
import { parseJsonBody } from './json-body.js';
import { headerLines } from './key-header.js';
import { operationStatus } from './operation-status.js';
import { checkOptionNames, createShared, type HttpIdempotencyOptions, resolveRoute } from './options.js';
import { type HttpAnswer, problemAnswer } from './problem.js';
import type { RequestView } from './scope.js';
import { readCapped } from './web/body.js';

export type { IdempotencyContext } from './context.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** oncely's context while this request owns its idempotency key. */
    idempotency: IdempotencyContext<Response>;
  }
}

export interface HonoIdempotencyOptions extends HttpIdempotencyOptions<Context> {
  /** Largest request body read for the fingerprint; larger requests get 413 and no record. Default 1,048,576. */
  readonly maxRequestBytes?: number;
}

export interface HonoIdempotency extends MiddlewareHandler {
  /** The status route of long-running requests: `app.get('/operations/:id', idem.status)`. */
  readonly status: (c: Context) => Promise<Response>;
}

/** What @hono/node-server passes as `c.env`. */
interface NodeBindings {
  readonly incoming?: { readonly rawHeaders?: readonly string[] };
}

// Statuses whose responses cannot carry a body (Fetch spec "null body status").
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * Idempotency-Key middleware for Hono, on Web-standard Request/Response (Node, Bun, Deno, Workers with
 * `nodejs_compat`). The first request with a key runs the route, its response is read whole and stored before it
 * is returned, and retries replay it byte for byte with `Idempotent-Replayed: true`. The body is read through
 * `c.req.arrayBuffer()`, which Hono caches: handlers read it again with `c.req.json()` and friends.
 *
 * @example
 * import { Hono } from 'hono';
 * import { idempotency } from 'oncely/hono';
 *
 * const app = new Hono();
 * app.post('/payments', idempotency({ store: new RedisStore({ client }) }), async (c) => {
 *   const payment = await charge(await c.req.json(), c.get('idempotency').token);
 *   return c.json(payment, 201);
 * });
 */
export function idempotency(options: HonoIdempotencyOptions): HonoIdempotency {
  checkOptionNames('hono', options, ['maxRequestBytes']);
  const { maxRequestBytes: limit, ...rest } = options;
  const maxRequestBytes = wholeNumber('maxRequestBytes', limit, 1024 * 1024, { min: 0 });
  const shared = createShared('hono', rest);
  const route = resolveRoute('hono', rest, shared.engine, shared.scopeNotices);
  const flow = new HttpIdempotency<Context>(shared, route);

  const middleware: MiddlewareHandler = async function idempotencyMiddleware(c, next) {
    if (!flow.handles(c.req.method)) return next();
    if (Number(c.req.header('content-length')) > maxRequestBytes)
      return tooLarge(maxRequestBytes, c.req.method);
    const body = new Uint8Array(await c.req.arrayBuffer());
    if (body.byteLength > maxRequestBytes) return tooLarge(maxRequestBytes, c.req.method);
    let deferred = false;
    const start = await flow.start(
      viewOf(c, body),
      (answer) => {
        deferred = true;
        return toResponse(answer);
      },
      () => {
        const json = parseJsonBody(c.req.header('content-type'), body);
        // Hono's c.req.json() and c.req.text() read the "text" entry of its public body cache; filled here, they
        // do not rebuild the body through a web Response (the costliest step of reading it again on Node).
        if (json !== undefined && json !== 'unparseable') {
          // Typed as Partial<Body>, but Hono keeps the promises of the bodies it read there.
          (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(json.text);
        }
        return json === 'unparseable';
      },
    );
    if (start.kind === 'pass') return next();
    if (start.kind === 'answer') return answerThrough(c, start.answer);
    c.set('idempotency', start.context);
    // The headers middleware set so far (c.header, c.res.headers), read without touching the context.
    start.handOver(contextHeaderPairs(c));
    try {
      await next();
    } catch (error) {
      // Only without an onError handler does a handler's error get here; the key is released, Hono answers.
      await start.fail(error);
      throw error;
    }
    if (deferred) return;
    const response = c.res;
    const held = heldBody(response);
    let bytes = held;
    if (bytes === undefined) {
      const read = await readCapped(response, start.holdLimit, () => void start.ended());
      if (!(read instanceof Uint8Array)) {
        // Past the cap, or an event stream: it goes out as it comes, not stored; the key is released when the
        // body is done (read to its end, or cancelled because the client went away).
        start.streaming(read.eventStream);
        c.res = undefined;
        c.res = new Response(read.stream, response);
        return;
      }
      bytes = read;
    }
    const finish = await start.respond({
      status: response.status,
      headers: responseHeaderPairs(response),
      body: bytes,
    });
    if (finish.kind === 'send' && !finish.original) {
      // Reset first: assigning over an existing response would merge its headers into the problem answer.
      c.res = undefined;
      c.res = toResponse(finish.answer);
    } else if (held === undefined) {
      // The body was read, so the response is spent: send one rebuilt from the same bytes.
      c.res = undefined;
      c.res = rebuilt(response, bytes);
    }
  };
  const status = async (c: Context) => toResponse(await operationStatus(shared, route, c.req.param('id')));
  return Object.assign(middleware, { status });
}

function viewOf(c: Context, body: Uint8Array): RequestView<Context> {
  return new HonoRequestView(c, body);
}

// A class rather than an object literal with two closures: one object per request.
class HonoRequestView implements RequestView<Context> {
  readonly method: string;
  readonly route: string | undefined;
  readonly target: string;
  readonly parsedBody = undefined;

  constructor(
    readonly request: Context,
    readonly bodyBytes: Uint8Array,
  ) {
    const url = request.req.url;
    const pathStart = url.indexOf('/', url.indexOf('//') + 2);
    const template = routeTemplate(request);
    this.method = request.req.method;
    // From `app.use('*', …)` the last matched route may be the middleware's own wildcard: use the path then.
    this.route = template === '' || template.includes('*') ? undefined : template;
    this.target = pathStart === -1 ? '/' : url.slice(pathStart);
  }

  header(name: string): string | undefined {
    return this.request.req.header(name);
  }

  /** A Web Request joins repeated lines; on @hono/node-server the Node request still has them apart. */
  repeated(name: string): boolean {
    return headerLines((this.request.env as NodeBindings | undefined)?.incoming?.rawHeaders, name) > 1;
  }
}

/**
 * The body of a response that holds it in memory, read without consuming the response (see `lightweightParts`):
 * reading it there skips instantiating a web stream per request, the largest cost of this middleware on Node.
 * Anything else (other runtimes, streamed bodies) returns undefined and is read normally.
 */
function heldBody(response: Response): Uint8Array | undefined {
  const body = lightweightParts(response)?.[1];
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return body;
  if (body === null) return new Uint8Array(0);
  return undefined;
}

/**
 * An answer of the layer sent the way a handler would send it: its headers over those middleware set on the
 * context (this request's CORS, request id), so a replay keeps them and the stored ones win where both are set.
 */
function answerThrough(c: Context, answer: HttpAnswer): Response {
  const body = NULL_BODY.has(answer.status) ? null : answer.body;
  const plain = plainAnswer(c, answer, body);
  if (plain !== undefined) return plain;
  const seen = new Set<string>();
  for (const [name, value] of answer.headers) {
    c.header(name, value, { append: seen.has(name) });
    seen.add(name);
  }
  if (NULL_BODY.has(answer.status)) return c.body(null, answer.status as 204);
  return c.body(answer.body as Uint8Array<ArrayBuffer>, answer.status as 200);
}

function toResponse(answer: HttpAnswer): Response {
  const headers = new Headers();
  for (const [name, value] of answer.headers) headers.append(name, value);
  return new Response(NULL_BODY.has(answer.status) ? null : (answer.body as Uint8Array<ArrayBuffer>), {
    status: answer.status,
    headers,
  });
}

function rebuilt(original: Response, body: Uint8Array): Response {
  return new Response(NULL_BODY.has(original.status) ? null : (body as Uint8Array<ArrayBuffer>), {
    status: original.status,
    statusText: original.statusText,
    headers: original.headers,
  });
}

function tooLarge(limit: number, method: string): Response {
  const answer = problemAnswer('body-too-large', `the body exceeds ${limit} bytes`);
  return toResponse(rejected('body-too-large', answer, method, undefined));
}

/**
 * The route template of the last matched handler. `hono/route` reads a Symbol private to the build of Hono it is
 * loaded from; this module is ESM, so it always gets the ESM helper, while a CommonJS app (`require('hono')`, or
 * TypeScript compiled to CommonJS) builds its requests with Hono's CJS copy, which carries the other Symbol: the
 * helper then throws on every request. The request's own `matchedRoutes` (deprecated in Hono 4, still there) is of
 * the app's copy whichever it is.
 */
function routeTemplate(c: Context): string {
  try {
    return routePath(c, -1);
  } catch (error) {
    const routes = (c.req as { readonly matchedRoutes?: readonly { readonly path: string }[] }).matchedRoutes;
    if (routes === undefined) throw error;
    return routes.at(-1)?.path ?? '';
  }
}
