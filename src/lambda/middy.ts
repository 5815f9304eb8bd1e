/**
 * @module `middyIdempotency`: the Lambda HTTP layer as a Middy middleware, with the same answers as the plain
 * wrapper, for handlers already built with Middy.
 */
import type { AnswerFor, HttpEvent, LambdaContext } from './events.js';
import { LambdaHttp, type LambdaIdempotencyOptions, type OwnedInvocation } from './invocation.js';

/** The part of Middy's request object the middleware uses (`@middy/core` 6 and later). */
export interface MiddyRequest<E extends HttpEvent = HttpEvent> {
  readonly event: E;
  readonly context: LambdaContext;
  response: unknown;
  error: unknown;
}

/** A Middy middleware object: pass it to `middy(handler).use(…)`. */
export interface MiddyIdempotency<E extends HttpEvent = HttpEvent> {
  readonly name: string;
  before(request: MiddyRequest<E>): Promise<AnswerFor<E> | undefined>;
  after(request: MiddyRequest<E>): Promise<void>;
  onError(request: MiddyRequest<E>): Promise<void>;
}

/**
 * The Lambda HTTP layer as a Middy middleware, with the same answers as `idempotency` (and every HTTP adapter).
 * `before` answers replays, 4xx and 503 by returning early (Middy then skips the handler and every `after`);
 * `after` stores the response before it is returned; `onError` lets the key go, so a retry runs again. Use it
 * first, so it reads the raw event before body parsers and stores the response after serializers. The handler
 * reads its context with `idempotencyOf(context)`.
 *
 * @example
 * import middy from '@middy/core';
 * import { idempotencyOf, middyIdempotency } from 'oncely/lambda';
 *
 * export const handler = middy(async (event: APIGatewayProxyEvent, context: Context) => {
 *   const payment = await charge(JSON.parse(event.body ?? '{}'), idempotencyOf(context)?.token);
 *   return { statusCode: 201, body: JSON.stringify(payment) };
 * }).use(middyIdempotency({ store: new RedisStore({ client }) }));
 */
export function middyIdempotency<E extends HttpEvent = HttpEvent>(
  options: LambdaIdempotencyOptions<E>,
): MiddyIdempotency<E> {
  const layer = new LambdaHttp<E>('lambda', options);
  // Middy makes one request object per invocation; what the invocation owns stays with it, never on `internal`
  // (which a plugin may share between invocations).
  const owned = new WeakMap<MiddyRequest<E>, OwnedInvocation>();
  return {
    name: 'oncely',
    async before(request) {
      const started = await layer.start(request.event, request.context);
      if (started.kind === 'answer') return started.result;
      if (started.kind === 'run') owned.set(request, started.claim);
      return undefined;
    },
    async after(request) {
      const claim = owned.get(request);
      if (claim === undefined) return;
      owned.delete(request);
      request.response = await layer.finish(claim, request.response);
    },
    async onError(request) {
      const claim = owned.get(request);
      if (claim === undefined) return;
      owned.delete(request);
      // The response stays unset, so Middy rethrows the error to Lambda.
      await layer.fail(claim, request.error);
    },
  };
}
