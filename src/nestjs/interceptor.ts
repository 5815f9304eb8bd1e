/**
 * @module `IdempotencyInterceptor`: the Nest layer's request path, which drives the same flow as every oncely HTTP
 * adapter for the handlers `@Idempotent()` marks, and holds the response until it is stored so a replay is byte for
 * byte what was sent.
 */
import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { from, mergeMap, type Observable, of } from 'rxjs';
import type { HeaderPairs } from '../core/store.js';
import type { IdempotencyContext } from '../http/context.js';
import { answerInstead, answerOver } from '../http/node/answer.js';
import { operationStatus } from '../http/operation-status.js';
import type { HttpAnswer } from '../http/problem.js';
import { type Exchange, exchangeOf, type NestRequest } from './exchange.js';
import { NestExchange } from './respond.js';
import { OncelyRoutes, type RouteEntry } from './routes.js';
import { handleRpc } from './rpc.js';

// On Nest's request object: the layer took this request (a second copy of the interceptor stands aside), and the
// handler's context while the request owns its key.
const TAKEN = Symbol('oncely.nestjs.taken');
const CONTEXT = Symbol('oncely.nestjs.context');
interface Marked {
  [TAKEN]?: true;
  [CONTEXT]?: IdempotencyContext;
}

/** The context of a request that owns its idempotency key, from Nest's request object; undefined otherwise. */
export function idempotencyContextOf(request: object): IdempotencyContext | undefined {
  return (request as Marked)[CONTEXT];
}

const UNSUPPORTED =
  'oncely/nestjs: this request is neither Express nor Fastify (use @nestjs/platform-express or @nestjs/platform-fastify)';

/**
 * Idempotency-Key handling for the handlers that `@Idempotent()` marks (and the status route that
 * `@IdempotencyStatus()` marks). Runs after guards and pipes' parsing (the body is there), drives the same flow as
 * every oncely adapter, and holds the response on Node's `ServerResponse` until it is stored: a replay is
 * byte-identical whatever Nest's serialization, exception filters or other interceptors did to the first answer.
 */
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(readonly routes: OncelyRoutes) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const type = context.getType();
    if (type !== 'http' && type !== 'rpc') return next.handle();
    const entry = this.routes.entryFor(context.getClass(), context.getHandler() as () => unknown);
    if (entry === undefined) return next.handle();
    if (type === 'rpc')
      return entry.kind === 'idempotent'
        ? handleRpc(entry.flow, context, () => next.handle())
        : next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<NestRequest & Marked>();
    // @Idempotent() on a controller and on its handler applies this interceptor twice: the outer one decides.
    if (request[TAKEN]) return next.handle();
    if (entry.kind === 'idempotent' && !entry.flow.handles(request.method ?? 'GET')) return next.handle();
    request[TAKEN] = true;
    return from(this.#start(entry, request, http.getResponse(), next)).pipe(mergeMap((result) => result));
  }

  async #start(
    entry: RouteEntry,
    request: NestRequest & Marked,
    response: unknown,
    next: CallHandler,
  ): Promise<Observable<unknown>> {
    const exchange = await exchangeOf(request, response);
    if (exchange === undefined) throw new TypeError(UNSUPPORTED);
    const before = exchange.headers();
    if (entry.kind === 'status') {
      const id = exchange.params?.id;
      const answer = await operationStatus(
        this.routes.shared,
        entry.route,
        typeof id === 'string' ? id : undefined,
      );
      return answered(exchange, before, answer, entry.answersItself);
    }
    let held: NestExchange | undefined;
    const start = await entry.flow.start(exchange.view, (answer) => held?.accept(answer));
    if (start.kind === 'pass') return next.handle();
    if (start.kind === 'answer') return answered(exchange, before, start.answer, entry.answersItself);
    held = new NestExchange(start, exchange.raw, before, entry.answersItself);
    request[CONTEXT] = start.context;
    return next.handle();
  }
}

/** The layer answers: the handler does not run, and what Nest then sends for "no value" is replaced. */
function answered(
  exchange: Exchange<NestRequest>,
  before: HeaderPairs,
  answer: HttpAnswer,
  answersItself: boolean,
): Observable<undefined> {
  if (answersItself) answerOver(exchange.raw, before, answer);
  else answerInstead(exchange.raw, before, answer);
  return of(undefined);
}

// Nest's dependency injection without decorator syntax (see routes.ts).
Injectable()(IdempotencyInterceptor);
Inject(OncelyRoutes)(IdempotencyInterceptor, undefined, 0);
