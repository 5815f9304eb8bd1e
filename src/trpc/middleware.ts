/**
 * @module `idempotent(options)`: the tRPC 11 procedure middleware. A mutation's first call with a key runs the
 * procedure and stores its result (through the codec, before any transformer, so superjson and plain JSON
 * clients alike get it back); a retry gets the stored result without the procedure running; a busy key, another
 * input under the key, a bad key and an unreachable store are `TRPCError`s. Queries and subscriptions pass
 * through.
 */
import type { TRPCMiddlewareFunction } from '@trpc/server';
import type { ExecutionContext } from '../core/claim.js';
import { Engine } from '../core/engine.js';
import { InvalidKeyError, ResponseNotRetainedError } from '../core/errors.js';
import { canonicalJson, fingerprintOf } from '../core/fingerprint.js';
import { scopedKey, validateKey } from '../core/key.js';
import { parseKeyHeader } from '../http/key-header.js';
import { defaultScope } from '../http/scope.js';
import { trpcErrorFor } from './errors.js';
import { headerOf } from './headers.js';
import { type ResolvedOptions, resolveOptions, type TrpcIdempotencyOptions } from './options.js';

/** What the middleware adds to the context: the call's claim (its fencing token); undefined when not guarded. */
export interface IdempotencyContextOverride {
  readonly idempotency: ExecutionContext | undefined;
}

type Options<TContext, TMeta, TOverrides, TInput> = Parameters<
  TRPCMiddlewareFunction<TContext, TMeta, TOverrides, IdempotencyContextOverride, TInput>
>[0];
type Result = ReturnType<TRPCMiddlewareFunction<object, object, object, IdempotencyContextOverride, unknown>>;

/**
 * The middleware, generic over the procedure it is used on: `.use()` keeps the procedure's context, input and
 * output types, and adds `ctx.idempotency`. `TInput` and `TContext` are what the options read, so the procedure's
 * input (after `.input()`) and context must be at least those.
 */
export interface IdempotentMiddleware<TInput, TContext> {
  <TCtx extends TContext, TMeta, TOverrides, TIn extends TInput>(
    opts: Options<TCtx, TMeta, TOverrides, TIn>,
  ): Result;
  /** The engine behind the middleware (its store, lease and retention). */
  readonly engine: Engine;
}

/**
 * Makes a mutation procedure idempotent. Put it after `.input()`, so the key and the fingerprint see the parsed
 * input: `t.procedure.input(schema).use(idempotent({ store, key: (input) => input.orderId })).mutation(…)`.
 *
 * @example
 * import { initTRPC } from '@trpc/server';
 * import { idempotent } from 'oncely/trpc';
 *
 * const t = initTRPC.context<{ req: Request }>().create();
 * const pay = t.procedure
 *   .input((raw) => raw as { cents: number })
 *   .use(idempotent({ store, headers: (ctx) => ctx.req.headers }))
 *   .mutation(({ input, ctx }) => charge(input.cents, ctx.idempotency?.token));
 */
export function idempotent<TInput = unknown, TContext = object>(
  options: TrpcIdempotencyOptions<TInput, TContext>,
): IdempotentMiddleware<TInput, TContext> {
  const resolved = resolveOptions(options);
  const engine = new Engine(resolved.engine);
  const { codec, waitMs } = resolved;

  const middleware = async <TCtx extends TContext, TMeta, TOverrides, TIn extends TInput>(
    opts: Options<TCtx, TMeta, TOverrides, TIn>,
  ): Result => {
    const { next, type, path, input } = opts;
    const ctx = opts.ctx as unknown as TContext;
    if (type !== 'mutation') return next({ ctx: { idempotency: undefined } });
    try {
      const key = keyOf(input, ctx, resolved);
      if (key === undefined) {
        if (!resolved.required) return next({ ctx: { idempotency: undefined } });
        throw new InvalidKeyError('missing', `${path} needs an idempotency key`);
      }
      const label = `trpc:${path}`;
      const result = await engine.execute({
        key: scopedKey(`${label}\n${identityOf(ctx, path, resolved)}`, key),
        scope: label,
        fingerprint: fingerprintOf([
          canonicalJson(resolved.fingerprint ? resolved.fingerprint(input) : input),
        ]),
        waitMs,
        run: (claim) => next({ ctx: { idempotency: claim } }),
        // A failed call (the procedure threw, or a later middleware refused it) lets the key go.
        settle: (answer) =>
          answer.ok
            ? { keep: true, outcome: { status: 0, headers: [], body: codec.encode(answer.data) } }
            : { keep: false },
      });
      if (result.kind === 'executed') return result.result;
      if (!result.outcome.retained) throw new ResponseNotRetainedError(undefined);
      const replayed = { ok: true, data: codec.decode(result.outcome.outcome.body), marker: MARKER };
      return replayed as Awaited<Result>;
    } catch (error) {
      throw trpcErrorFor(error) ?? error;
    }
  };
  return Object.assign(middleware, { engine });
}

/** tRPC's mark on a middleware result (a brand in its types, this string at run time). */
const MARKER = 'middlewareMarker';

function keyOf<TInput, TContext>(
  input: TInput,
  ctx: TContext,
  options: ResolvedOptions<TInput, TContext>,
): string | undefined {
  const fromInput = options.key?.(input);
  if (fromInput !== undefined) return validateKey(fromInput);
  if (options.headers === undefined) return undefined;
  return parseKeyHeader(headerOf(options.headers(ctx), options.header));
}

function identityOf<TInput, TContext>(
  ctx: TContext,
  path: string,
  options: ResolvedOptions<TInput, TContext>,
): string {
  if (options.scope !== undefined) return options.scope(ctx);
  if (options.headers === undefined) return '';
  const headers = options.headers(ctx);
  // The HTTP adapters' default scope, read from the request that carried the call: one copy of its rules.
  return defaultScope({
    request: undefined,
    method: 'MUTATION',
    route: path,
    target: path,
    header: (name) => headerOf(headers, name),
    bodyBytes: undefined,
    parsedBody: undefined,
  });
}
