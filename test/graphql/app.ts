/**
 * @module The GraphQL app the oncely/graphql tests drive: a yoga server over a small payments schema whose
 * resolvers (shared with the Apollo Server app, apollo-app.ts) count their runs (per key and per field), block on a
 * gate when asked, and fail once when asked; and
 * `post()`, one operation sent through `yoga.fetch` (in-process) or over a real socket.
 */
import { createSchema, createYoga } from 'graphql-yoga';
import type { Store } from 'oncely';
import {
  currentClaim,
  type GraphQLIdempotencyOptions,
  idempotentDirective,
  useIdempotency,
} from 'oncely/graphql';

export const typeDefs = /* GraphQL */ `
  type Payment {
    id: ID!
    cents: Int!
    note: String
    label: String!
    token: Float
  }
  input PaymentInput {
    cents: Int!
    note: String
  }
  type PaymentOps {
    create(cents: Int!): Payment!
  }
  type Query {
    payment(id: ID!): Payment
    runs: Int!
    preview: PaymentOps!
  }
  type Mutation {
    pay(cents: Int!, note: String, idempotencyKey: String): Payment! @idempotent
    refund(cents: Int!): Payment!
    payInput(input: PaymentInput!): Payment! @idempotent
    slow(cents: Int!): Payment @idempotent
    flaky(cents: Int!): Payment! @idempotent
    plain(cents: Int!): Int!
    payments: PaymentOps!
  }
`;

export interface Counters {
  /** Runs of each mutation field's resolver. */
  readonly runs: Map<string, number>;
  /** Runs by idempotency key (header or argument), for the storm. */
  readonly byKey: Map<string, number>;
  /** While set, `slow` waits for it. */
  gate: Promise<void> | undefined;
  /** `flaky` throws while this is above zero, counting down: `failure`, or an Error of its own. */
  failures: number;
  failure: Error | undefined;
  /** How long `slow` holds its key after the gate, in ms. */
  delayMs: number;
}

export function counters(): Counters {
  return { runs: new Map(), byKey: new Map(), gate: undefined, failures: 0, failure: undefined, delayMs: 20 };
}

const bump = (map: Map<string, number>, name: string) => map.set(name, (map.get(name) ?? 0) + 1);

/**
 * The schema's resolvers, for yoga and for Apollo Server alike: `headerKey` reads the request's Idempotency-Key
 * from the server's context, for the per-key counts.
 */
export function resolvers<TContext>(count: Counters, headerKey: (context: TContext) => string | null) {
  let sequence = 0;
  const payment = (field: string, cents: number, note: string | null | undefined, context: TContext) => {
    bump(count.runs, field);
    bump(count.byKey, headerKey(context) ?? '');
    sequence += 1;
    return { id: `pay_${sequence}`, cents, note: note ?? null, token: currentClaim()?.token ?? null };
  };
  return {
    Payment: { label: (parent: { id: string; cents: number }) => `${parent.id}:${parent.cents}` },
    Query: {
      payment: (_: unknown, { id }: { id: string }) => ({ id, cents: 0, note: null, token: null }),
      runs: () => [...count.runs.values()].reduce((a, b) => a + b, 0),
      preview: () => ({}),
    },
    PaymentOps: {
      create: (_: unknown, { cents }: { cents: number }, context: TContext) =>
        payment('create', cents, null, context),
    },
    Mutation: {
      pay: (
        _: unknown,
        args: { cents: number; note?: string; idempotencyKey?: string },
        context: TContext,
      ) => {
        if (args.idempotencyKey !== undefined && args.idempotencyKey !== null)
          bump(count.byKey, `arg:${args.idempotencyKey}`);
        return payment('pay', args.cents, args.note, context);
      },
      refund: (_: unknown, { cents }: { cents: number }, context: TContext) =>
        payment('refund', cents, null, context),
      payInput: (_: unknown, { input }: { input: { cents: number; note?: string } }, context: TContext) =>
        payment('payInput', input.cents, input.note, context),
      slow: async (_: unknown, { cents }: { cents: number }, context: TContext) => {
        const result = payment('slow', cents, null, context);
        await count.gate;
        await new Promise((resolve) => setTimeout(resolve, count.delayMs));
        return result;
      },
      flaky: (_: unknown, { cents }: { cents: number }, context: TContext) => {
        if (count.failures > 0) {
          count.failures -= 1;
          bump(count.runs, 'flaky');
          throw count.failure ?? new Error('the card network is down');
        }
        return payment('flaky', cents, null, context);
      },
      payments: () => ({}),
      plain: (_: unknown, { cents }: { cents: number }) => {
        bump(count.runs, 'plain');
        return cents;
      },
    },
  };
}

export function app(
  store: Store,
  count: Counters,
  options: Omit<GraphQLIdempotencyOptions<YogaContext>, 'store'> = {},
) {
  return createYoga({
    schema: createSchema<YogaContext>({
      typeDefs: [idempotentDirective, typeDefs],
      resolvers: resolvers<YogaContext>(count, ({ request }) => request.headers.get('idempotency-key')),
    }),
    plugins: [useIdempotency<YogaContext>({ store, breaker: false, ...options })],
    logging: false,
    maskedErrors: true,
  });
}

export interface YogaContext {
  readonly request: Request;
}

export interface GraphQLAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** The response body as sent, for byte-for-byte comparisons. */
  readonly text: string;
  readonly body: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  };
}

type Fetch = (url: string, init: RequestInit) => Promise<Response> | Response;

/** One GraphQL operation posted as JSON, through `fetchFn` (the yoga's own `fetch`, or the global one). */
export async function post(
  fetchFn: Fetch,
  query: string,
  headers: Record<string, string> = {},
  url = 'http://localhost/graphql',
  variables?: Record<string, unknown>,
): Promise<GraphQLAnswer> {
  const response = await fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify(variables === undefined ? { query } : { query, variables }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: JSON.parse(text) as GraphQLAnswer['body'],
  };
}
