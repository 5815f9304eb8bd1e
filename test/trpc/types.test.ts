/**
 * What oncely/trpc promises a procedure's types: `.use(idempotent(…))` keeps the procedure's input and output
 * (as the router's callers and clients infer them), adds `ctx.idempotency`, and refuses, at compile time, a key
 * function the procedure's input does not fit or a middleware placed where there is no input yet. The assertions
 * are checked by the type-check (`tsc`); at run time they are no-ops.
 */
import { type inferRouterInputs, type inferRouterOutputs, initTRPC } from '@trpc/server';
import { type ExecutionContext, MemoryStore } from 'oncely';
import { idempotent } from 'oncely/trpc';
import { describe, expectTypeOf, it } from 'vitest';

const store = new MemoryStore();
const t = initTRPC.context<{ headers: Headers; user: string }>().create();

describe('idempotent() types', () => {
  it('keeps the input and output types, and adds ctx.idempotency', async () => {
    const app = t.router({
      pay: t.procedure
        .input((raw) => raw as { orderId: string; cents: number })
        .use(idempotent({ store, key: (input: { orderId: string }) => input.orderId }))
        .mutation(({ input, ctx }) => {
          expectTypeOf(ctx.idempotency).toEqualTypeOf<ExecutionContext | undefined>();
          expectTypeOf(ctx.user).toEqualTypeOf<string>();
          expectTypeOf(input).toEqualTypeOf<{ orderId: string; cents: number }>();
          return { id: 'pay_1', at: new Date(), cents: input.cents };
        }),
      byHeader: t.procedure
        .input((raw) => raw as { cents: number })
        .use(idempotent({ store, headers: (ctx: { headers: Headers }) => ctx.headers }))
        .mutation(({ input }) => input.cents),
    });
    expectTypeOf<inferRouterInputs<typeof app>['pay']>().toEqualTypeOf<{ orderId: string; cents: number }>();
    // What a client without a transformer gets: the Date as JSON writes it.
    expectTypeOf<inferRouterOutputs<typeof app>['pay']>().toEqualTypeOf<{
      id: string;
      at: string;
      cents: number;
    }>();
    expectTypeOf<inferRouterOutputs<typeof app>['byHeader']>().toEqualTypeOf<number>();
    const caller = app.createCaller({ headers: new Headers(), user: 'u' });
    expectTypeOf(caller.pay).parameter(0).toEqualTypeOf<{ orderId: string; cents: number }>();
    expectTypeOf(caller.pay).returns.resolves.toEqualTypeOf<{ id: string; at: Date; cents: number }>();
    expectTypeOf(caller.byHeader).returns.resolves.not.toBeAny();
  });

  it('refuses a key function the input does not fit (or no input yet), and a context without the headers read', () => {
    t.procedure
      .input((raw) => raw as { cents: number })
      // @ts-expect-error: the input has no orderId
      .use(idempotent({ store, key: (input: { orderId: string }) => input.orderId }));
    // Before .input() there is no input to read a key from.
    // @ts-expect-error: no input yet
    t.procedure.use(idempotent({ store, key: (input: { orderId: string }) => input.orderId }));
    initTRPC
      .context<{ user: string }>()
      .create()
      .procedure.input((raw) => raw as { cents: number })
      // @ts-expect-error: the context has no headers
      .use(idempotent({ store, headers: (ctx: { headers: Headers }) => ctx.headers }));
  });
});
