/**
 * @module `oncely/fetch`: Idempotency-Key handling for web-standard handlers, `(request: Request, ...rest) =>
 * Response` (Next.js route handlers, Bun, Deno, any runtime with `Request`/`Response`): a wrapper
 * (`withIdempotency`) and a middleware for handler chains (`idempotency(options)`), over the framework-free flow.
 */
import { InvalidOptionsError } from '../core/errors.js';
import { wholeNumber } from '../core/validate.js';
import { rejected } from './diagnostics.js';
import { HttpIdempotency } from './flow.js';
import { parseJsonBody } from './json-body.js';
import { operationStatus } from './operation-status.js';
import { checkOptionNames, createShared, type HttpIdempotencyOptions, resolveRoute } from './options.js';
import { problemAnswer } from './problem.js';
import { answerResponse, rebuiltResponse } from './web/answer.js';
import { pairsOf, readCapped } from './web/body.js';
import { attachContext } from './web/contexts.js';
import { readRequestBody, WebRequestView } from './web/request.js';

export type { IdempotencyContext } from './context.js';
export { idempotencyOf } from './web/contexts.js';

export interface FetchIdempotencyOptions extends HttpIdempotencyOptions<Request> {
  /** Largest request body read for the fingerprint; larger requests get 413 and no record. Default 1,048,576. */
  readonly maxRequestBytes?: number;
  /**
   * The route's template (`'/orders/[id]'`), or a function that tells it for a request (a router's matched
   * route): the default scope and the telemetry labels use it. Default: the request's path (scope), the method
   * alone (labels).
   */
  readonly route?: string | ((request: Request) => string | undefined);
}

/** A web-standard handler: the runtime's own arguments after the request are passed through untouched. */
export type FetchHandler<R extends Request = Request, Rest extends unknown[] = []> = (
  request: R,
  ...rest: Rest
) => Response | Promise<Response>;

/** What comes after the middleware in a handler chain. */
export type FetchNext<R extends Request = Request> = (request: R) => Response | Promise<Response>;

/** The middleware of one `idempotency(options)` call, with the wrapper and the status route of the same layer. */
export interface FetchIdempotency {
  <R extends Request>(request: R, next: FetchNext<R>): Promise<Response>;
  /** `handler` behind this layer: the same function as `withIdempotency(handler, options)`, sharing its store. */
  wrap<R extends Request, Rest extends unknown[]>(
    handler: FetchHandler<R, Rest>,
  ): (request: R, ...rest: Rest) => Promise<Response>;
  /**
   * The status route of long-running requests: the operation `id` (or the last path segment of a `Request`'s URL,
   * as in `GET /operations/<id>`) answered 202 while it runs, then its stored response.
   */
  status(idOrRequest: string | Request): Promise<Response>;
}

/**
 * Idempotency-Key middleware over web-standard `Request`/`Response`. The first request with a key runs the
 * handler; its `Response` is read whole and stored before a `Response` with the same status, headers and bytes is
 * returned; retries replay it with `Idempotent-Replayed: true`. The handler finds its context with
 * `idempotencyOf(request)`.
 *
 * @example
 * import { idempotency } from 'oncely/fetch';
 *
 * const idem = idempotency({ store });
 * const app = (request: Request) => idem(request, (request) => router(request));
 */
export function idempotency(options: FetchIdempotencyOptions): FetchIdempotency {
  checkOptionNames('fetch', options, ['maxRequestBytes', 'route']);
  const { maxRequestBytes: limit, route: template, ...rest } = options;
  const maxRequestBytes = wholeNumber('maxRequestBytes', limit, 1024 * 1024, { min: 0 });
  const routeOf = resolveTemplate(template);
  const shared = createShared('fetch', rest);
  const route = resolveRoute('fetch', rest, shared.engine, shared.scopeNotices);
  const flow = new HttpIdempotency<Request>(shared, route);

  async function handle(request: Request, call: () => Response | Promise<Response>): Promise<Response> {
    if (!flow.handles(request.method)) return call();
    const body = await readRequestBody(request, maxRequestBytes);
    if (body === undefined) return tooLarge(maxRequestBytes, request.method);
    let deferred = false;
    const start = await flow.start(
      new WebRequestView(request, body, routeOf(request)),
      (answer) => {
        deferred = true;
        return answerResponse(answer);
      },
      () => parseJsonBody(request.headers.get('content-type'), body) === 'unparseable',
    );
    if (start.kind === 'pass') return call();
    if (start.kind === 'answer') return answerResponse(start.answer);
    attachContext(request, start.context);
    // Nothing before the layer set headers on this response: every header of the handler's response is its own.
    start.handOver([]);
    let response: Response;
    let read: Awaited<ReturnType<typeof readCapped>>;
    try {
      response = await call();
      // `defer` sent its 202 (the handler returns it): the work settles the claim in the background.
      if (deferred) return response;
      if (!isResponse(response))
        throw new TypeError(`oncely/fetch: the handler must return a Response, got ${describe(response)}`);
      read = await readCapped(response, start.holdLimit, () => void start.ended());
    } catch (error) {
      // A thrown handler, or a body that failed while it was read: the key is released, the runtime answers.
      await start.fail(error);
      throw error;
    }
    if (!(read instanceof Uint8Array)) {
      // Past the cap, or an event stream: it goes out as it comes, not stored; the key is released when the body
      // is done (read to its end, or cancelled because the client went away).
      start.streaming(read.eventStream);
      return new Response(read.stream, response);
    }
    const finish = await start.respond({
      status: response.status,
      headers: pairsOf(response.headers),
      body: read,
    });
    if (finish.kind === 'send' && !finish.original) return answerResponse(finish.answer);
    // The body was read, so the response is spent: send one rebuilt from the same bytes.
    return rebuiltResponse(response, read);
  }

  const middleware = function idempotencyMiddleware<R extends Request>(
    request: R,
    next: FetchNext<R>,
  ): Promise<Response> {
    return handle(request, () => next(request));
  };
  const wrap = <R extends Request, Rest extends unknown[]>(handler: FetchHandler<R, Rest>) => {
    if (typeof handler !== 'function')
      throw new InvalidOptionsError('oncely/fetch: the handler to wrap must be a function');
    return function idempotentHandler(request: R, ...args: Rest): Promise<Response> {
      return handle(request, () => handler(request, ...args));
    };
  };
  const status = async (idOrRequest: string | Request) =>
    answerResponse(await operationStatus(shared, route, operationId(idOrRequest)));
  return Object.assign(middleware, { wrap, status });
}

/**
 * `handler` behind an Idempotency-Key layer: what Next.js route handlers export, what `Bun.serve` and `Deno.serve`
 * call. The options are checked here, once; the returned function takes the same arguments as `handler`.
 *
 * @example
 * import { idempotencyOf, withIdempotency } from 'oncely/fetch';
 *
 * export const POST = withIdempotency(async (request: Request) => {
 *   const payment = await charge(await request.json(), idempotencyOf(request)?.token);
 *   return Response.json(payment, { status: 201 });
 * }, { store });
 */
export function withIdempotency<R extends Request, Rest extends unknown[]>(
  handler: FetchHandler<R, Rest>,
  options: FetchIdempotencyOptions,
): (request: R, ...rest: Rest) => Promise<Response> {
  return idempotency(options).wrap(handler);
}

function resolveTemplate(
  template: FetchIdempotencyOptions['route'],
): (request: Request) => string | undefined {
  if (template === undefined) return () => undefined;
  if (typeof template === 'string') {
    if (!template.startsWith('/'))
      throw new InvalidOptionsError(`route must be a path template starting with "/", got ${template}`);
    return () => template;
  }
  if (typeof template !== 'function')
    throw new InvalidOptionsError(
      'route must be a path template or a function (request) => string | undefined',
    );
  return (request) => {
    const value = template(request);
    // Anything but a string would silently scope by the path instead: fail this request loudly.
    if (value !== undefined && typeof value !== 'string')
      throw new InvalidOptionsError('route: the function must return a string or undefined');
    return value;
  };
}

/** The operation id of a status request: given, or the last segment of the request's path. */
function operationId(idOrRequest: string | Request): string | undefined {
  if (typeof idOrRequest === 'string') return idOrRequest;
  const url = idOrRequest.url;
  const query = url.search(/[?#]/);
  const path = query === -1 ? url : url.slice(0, query);
  return path.slice(path.lastIndexOf('/') + 1) || undefined;
}

function tooLarge(limit: number, method: string): Response {
  const answer = problemAnswer('body-too-large', `the body exceeds ${limit} bytes`);
  return answerResponse(rejected('body-too-large', answer, method, undefined));
}

/**
 * True for a `Response`, told by its shape rather than `instanceof`: on Node, @hono/node-server replaces the global
 * `Response` with its own class once it serves, so the `Response` that `fetch()` resolves with (undici's) is no
 * instance of the global one there, and a handler that proxies an upstream answer returns one.
 */
function isResponse(value: unknown): value is Response {
  if (value instanceof Response) return true;
  if (value === null || typeof value !== 'object') return false;
  const { status, headers } = value as Partial<Response>;
  return typeof status === 'number' && typeof headers?.get === 'function' && 'body' in value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return value.constructor?.name ?? 'an object';
  return typeof value;
}
