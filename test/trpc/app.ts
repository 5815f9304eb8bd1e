/**
 * @module The tRPC router the oncely/trpc tests drive: payment mutations made idempotent by the header key or by
 * a key in the input, a slow one held by a gate, one that fails on demand, a query, and a plain mutation; each
 * resolver counts its runs. `caller()` calls it in-process with given headers.
 */
import { initTRPC } from '@trpc/server';
import type { Store } from 'oncely';
import { idempotent, type TrpcIdempotencyOptions } from 'oncely/trpc';

export interface Context {
  readonly headers: Headers;
}

export interface Counters {
  readonly runs: Map<string, number>;
  readonly byKey: Map<string, number>;
  gate: Promise<void> | undefined;
  failures: number;
  /** What `flaky` throws while `failures` is above zero; an Error of its own when undefined. */
  failure: Error | undefined;
}

export const counters = (): Counters => ({
  runs: new Map(),
  byKey: new Map(),
  gate: undefined,
  failures: 0,
  failure: undefined,
});

const bump = (map: Map<string, number>, name: string) => map.set(name, (map.get(name) ?? 0) + 1);

export interface PayInput {
  readonly cents: number;
  readonly note?: string;
}

const payInput = (raw: unknown): PayInput => {
  const { cents, note } = raw as { cents: unknown; note?: unknown };
  if (typeof cents !== 'number') throw new Error('cents must be a number');
  return note === undefined ? { cents } : { cents, note: String(note) };
};

export function router(
  store: Store,
  count: Counters,
  options: Omit<TrpcIdempotencyOptions<unknown, Context>, 'store'> = {},
) {
  const t = initTRPC.context<Context>().create();
  let sequence = 0;
  const byHeader = idempotent<unknown, Context>({
    store,
    headers: (ctx) => ctx.headers,
    breaker: false,
    ...options,
  });
  const payment = (name: string, ctx: Context, cents: number, token: number | undefined) => {
    bump(count.runs, name);
    bump(count.byKey, ctx.headers.get('idempotency-key') ?? '');
    sequence += 1;
    return { id: `pay_${sequence}`, cents, at: new Date(1_700_000_000_000 + sequence), token };
  };
  return t.router({
    pay: t.procedure
      .input(payInput)
      .use(byHeader)
      .mutation(({ input, ctx }) => payment('pay', ctx, input.cents, ctx.idempotency?.token)),
    order: t.procedure
      .input((raw) => raw as { orderId: string; cents: number })
      .use(idempotent({ store, key: (input: { orderId: string }) => input.orderId, breaker: false }))
      .mutation(({ input, ctx }) => payment('order', ctx, input.cents, ctx.idempotency?.token)),
    slow: t.procedure
      .input(payInput)
      .use(byHeader)
      .mutation(async ({ input, ctx }) => {
        const result = payment('slow', ctx, input.cents, ctx.idempotency?.token);
        await count.gate;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return result;
      }),
    flaky: t.procedure
      .input(payInput)
      .use(byHeader)
      .mutation(({ input, ctx }) => {
        if (count.failures > 0) {
          count.failures -= 1;
          bump(count.runs, 'flaky');
          throw count.failure ?? new Error('the card network is down');
        }
        return payment('flaky', ctx, input.cents, undefined);
      }),
    balance: t.procedure.use(byHeader).query(({ ctx }) => {
      bump(count.runs, 'balance');
      return { cents: 100, guarded: ctx.idempotency !== undefined };
    }),
    plain: t.procedure.input(payInput).mutation(({ input }) => {
      bump(count.runs, 'plain');
      return input.cents;
    }),
  });
}

export type AppRouter = ReturnType<typeof router>;

/** A caller of `app` as a request with `headers` would make it. */
export function caller(app: AppRouter, headers: Record<string, string> = {}) {
  return app.createCaller({ headers: new Headers(headers) });
}
