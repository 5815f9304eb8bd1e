/**
 * @module The core of the Lambda HTTP layer, shared by the wrapper (`idempotency`) and the Middy middleware: one
 * invocation's claim from start to finish through the same `HttpIdempotency` as every HTTP adapter, and
 * `idempotencyOf(context)`, the handler's way to its claim.
 */
import { InvalidOptionsError } from '../core/errors.js';
import type { IdempotencyContext } from '../http/context.js';
import { HttpIdempotency, type Running } from '../http/flow.js';
import { parseJsonBody } from '../http/json-body.js';
import {
  checkOptionNames,
  createShared,
  type HttpIdempotencyOptions,
  resolveRoute,
} from '../http/options.js';
import type { AnswerFor, HttpEvent, LambdaContext } from './events.js';
import { type EventFormat, lambdaScope, readHttpEvent } from './http-event.js';
import { outcomeOf, resultOf } from './http-result.js';

/**
 * Options of `idempotency` and `middyIdempotency`: those of every HTTP adapter (docs/http.md#options), with the
 * event as the request the `scope` and `fingerprint` functions get. `longRunning` is refused: an invocation is
 * frozen once it answers, so work deferred past a 202 would never finish.
 */
export type LambdaIdempotencyOptions<E extends HttpEvent = HttpEvent> = Omit<
  HttpIdempotencyOptions<E>,
  'longRunning'
>;

/** What a handler sees of the layer while its invocation owns the key (no `defer`: see the options). */
export type LambdaIdempotencyContext = Omit<IdempotencyContext<never>, 'defer'>;

/** What an invocation does next: run the handler (with the claim), or answer without it. */
export type Started<E> =
  | { readonly kind: 'pass' }
  | { readonly kind: 'answer'; readonly result: AnswerFor<E> }
  | { readonly kind: 'run'; readonly claim: OwnedInvocation };

/** An invocation that owns its key: settle it with the handler's result (`finish`) or its error (`fail`). */
export interface OwnedInvocation {
  readonly format: EventFormat;
  readonly running: Running<never>;
}

const PASS = { kind: 'pass' } as const;
// Handlers read their context through the Lambda context too (`idempotencyOf`), so Middy handlers can reach it.
const contexts = new WeakMap<object, LambdaIdempotencyContext>();

/**
 * The context of the invocation that owns its key, for the Lambda context object it was called with, or
 * undefined when the layer let the request pass (a method it does not handle, no key where none is required).
 *
 * @example
 * export const handler = middy(async (event, context) => {
 *   const { token } = idempotencyOf(context)!;
 * }).use(middyIdempotency({ store }));
 */
export function idempotencyOf(context: object): LambdaIdempotencyContext | undefined {
  return contexts.get(context);
}

/**
 * The Lambda side of the HTTP flow, shared by the wrapper and the Middy middleware: reads the event, runs the
 * same `HttpIdempotency` as every HTTP adapter (so every answer is theirs), and turns results and answers into
 * the event's own payload format. The lease of a claim ends with the invocation (`getRemainingTimeInMillis`).
 */
export class LambdaHttp<E extends HttpEvent> {
  readonly #flow: HttpIdempotency<E>;

  constructor(adapter: string, options: LambdaIdempotencyOptions<E>) {
    checkOptionNames(adapter, options);
    if ((options as { longRunning?: unknown }).longRunning !== undefined) {
      throw new InvalidOptionsError(
        `oncely/${adapter}: longRunning is not available on Lambda: an invocation is frozen once it answers, so deferred work would not finish`,
      );
    }
    const shared = createShared(adapter, options);
    const resolved = resolveRoute(adapter, options, shared.engine, shared.scopeNotices);
    // Without a scope of the user's, the principal API Gateway authenticated names the client (see lambdaScope).
    const route =
      options.scope === undefined ? { ...resolved, scope: lambdaScope(shared.scopeNotices) } : resolved;
    this.#flow = new HttpIdempotency<E>(shared, route);
  }

  /** Decides an invocation. Rejects only with errors of the user's own functions (scope, fingerprint). */
  async start<Ev extends E>(event: Ev, context: LambdaContext | undefined): Promise<Started<Ev>> {
    const read = readHttpEvent(event);
    if (!this.#flow.handles(read.view.method)) return PASS;
    const start = await this.#flow.start<never>(
      read.view,
      refuseDefer,
      () => parseJsonBody(read.view.header('content-type'), read.body) === 'unparseable',
      deadlineOf(context),
    );
    if (start.kind === 'pass') return PASS;
    if (start.kind === 'answer')
      return { kind: 'answer', result: resultOf(start.answer, read.format) as AnswerFor<Ev> };
    if (context !== null && typeof context === 'object') contexts.set(context, start.context);
    return { kind: 'run', claim: { format: read.format, running: start } };
  }

  /**
   * The handler returned: the result is stored (or the key let go, per the outcome policy) before it is returned.
   * The handler's own result goes back as it is; an answer of the layer instead (the claim was lost) in its place.
   */
  async finish<Ev extends E, R>(claim: OwnedInvocation, result: R): Promise<R | AnswerFor<Ev>> {
    const outcome = outcomeOf(result, claim.format);
    if (outcome === undefined) {
      // API Gateway answers such a result with 502: nothing to store, so the retry runs again.
      await claim.running.fail(new Error('the handler returned no HTTP response'));
      return result;
    }
    const finish = await claim.running.respond(outcome);
    if (finish.kind === 'error') throw finish.error;
    if (finish.kind === 'send' && !finish.original)
      return resultOf(finish.answer, claim.format) as AnswerFor<Ev>;
    return result;
  }

  /** The handler threw: the key is let go (a retry runs again) and the error goes on to Lambda. */
  async fail(claim: OwnedInvocation, error: unknown): Promise<void> {
    await claim.running.fail(error);
  }
}

/**
 * When the invocation times out, as local time: its lease ends there, so an invocation that times out leaves
 * its key to the next one at once instead of a whole `leaseMs` later. Undefined without a Lambda context.
 */
export function deadlineOf(context: LambdaContext | undefined): number | undefined {
  const remaining = (context as Partial<LambdaContext> | undefined)?.getRemainingTimeInMillis;
  if (typeof remaining !== 'function') return undefined;
  const ms = remaining.call(context);
  return Number.isFinite(ms) ? Date.now() + Math.max(0, ms) : undefined;
}

function refuseDefer(): never {
  throw new InvalidOptionsError('defer is not available on Lambda (see the longRunning option)');
}
