/**
 * @module `idempotency(options)`: the Lambda HTTP layer as a handler wrapper for API Gateway (REST and HTTP APIs)
 * and Function URLs, for handlers written without Middy.
 */
import { InvalidOptionsError } from '../core/errors.js';
import type { AnswerFor, HttpEvent, LambdaContext } from './events.js';
import { LambdaHttp, type LambdaIdempotencyContext, type LambdaIdempotencyOptions } from './invocation.js';

export interface LambdaHandlerExtras {
  /** The layer's context while this invocation owns its key; undefined when the request passed through. */
  readonly idempotency: LambdaIdempotencyContext | undefined;
}

/** An API Gateway (REST or HTTP API) or Function URL handler, with the layer's context as third argument. */
export type LambdaHttpHandler<E extends HttpEvent, C extends LambdaContext, R> = (
  event: E,
  context: C,
  extras: LambdaHandlerExtras,
) => Promise<R> | R;

/** The wrapped handler: what Lambda calls. It returns the handler's result, or an answer of the layer's. */
export type WrappedHttpHandler<E extends HttpEvent, C extends LambdaContext, R> = (
  event: E,
  context: C,
) => Promise<R | AnswerFor<E>>;

export type LambdaIdempotency<E extends HttpEvent> = <Ev extends E, C extends LambdaContext, R>(
  handler: LambdaHttpHandler<Ev, C, R>,
) => WrappedHttpHandler<Ev, C, R>;

/**
 * Idempotency-Key handling for Lambda functions behind API Gateway (REST APIs, format 1.0; HTTP APIs, format 2.0)
 * and Function URLs, with the answers of every oncely HTTP adapter: the first invocation with a key runs the
 * handler and its result is stored before it is returned; retries get it back byte for byte (base64 bodies,
 * multi-value headers and cookies included) with `Idempotent-Replayed: true`; a duplicate in flight gets 409, the
 * same key with another request 422, a missing key 400, an unreachable store 503, all `application/problem+json`.
 * The claim's lease ends when the invocation times out (`context.getRemainingTimeInMillis()`), so a timed-out
 * invocation's key is taken over by the next retry at once.
 *
 * @example
 * import { idempotency } from 'oncely/lambda';
 *
 * const idem = idempotency({ store: new RedisStore({ client }) });
 * export const handler = idem(async (event: APIGatewayProxyEventV2, _context, { idempotency }) => {
 *   const payment = await charge(JSON.parse(event.body ?? '{}'), idempotency?.token);
 *   return { statusCode: 201, headers: { 'content-type': 'application/json' }, body: JSON.stringify(payment) };
 * });
 */
export function idempotency<E extends HttpEvent = HttpEvent>(
  options: LambdaIdempotencyOptions<E>,
): LambdaIdempotency<E> {
  const layer = new LambdaHttp<E>('lambda', options);
  return <Ev extends E, C extends LambdaContext, R>(handler: LambdaHttpHandler<Ev, C, R>) => {
    if (typeof handler !== 'function')
      throw new InvalidOptionsError('oncely/lambda: wrap a function (event, context, extras) => result');
    return async function idempotentHandler(event: Ev, context: C): Promise<R | AnswerFor<Ev>> {
      const started = await layer.start(event, context);
      if (started.kind === 'pass') return handler(event, context, { idempotency: undefined });
      if (started.kind === 'answer') return started.result;
      const { claim } = started;
      let result: R;
      try {
        result = await handler(event, context, { idempotency: claim.running.context });
      } catch (error) {
        await layer.fail(claim, error);
        throw error;
      }
      return layer.finish<Ev, R>(claim, result);
    };
  };
}
