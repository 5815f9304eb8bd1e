/**
 * @module The GraphQL app the oncely/graphql tests drive: a yoga server over a small payments schema whose
 * resolvers count their runs (per key and per field), block on a gate when asked, and fail once when asked; and
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

export function app(
  store: Store,
  count: Counters,
  options: Omit<GraphQLIdempotencyOptions<YogaContext>, 'store'> = {},
) {
  let sequence = 0;
  const payment = (field: string, cents: number, note: string | null | undefined, request: Request) => {
    bump(count.runs, field);
    bump(count.byKey, request.headers.get('idempotency-key') ?? '');
    sequence += 1;
    return { id: `pay_${sequence}`, cents, note: note ?? null, token: currentClaim()?.token ?? null };
  };
  return createYoga({
    schema: createSchema<YogaContext>({
      typeDefs: [idempotentDirective, typeDefs],
      resolvers: {
        Payment: { label: (parent: { id: string; cents: number }) => `${parent.id}:${parent.cents}` },
        Query: {
          payment: (_, { id }: { id: string }) => ({ id, cents: 0, note: null, token: null }),
          runs: () => [...count.runs.values()].reduce((a, b) => a + b, 0),
          preview: () => ({}),
        },
        PaymentOps: {
          create: (_, { cents }: { cents: number }, { request }) => payment('create', cents, null, request),
        },
        Mutation: {
          pay: (_, args: { cents: number; note?: string; idempotencyKey?: string }, { request }) => {
            if (args.idempotencyKey !== undefined && args.idempotencyKey !== null)
              bump(count.byKey, `arg:${args.idempotencyKey}`);
            return payment('pay', args.cents, args.note, request);
          },
          refund: (_, { cents }: { cents: number }, { request }) => payment('refund', cents, null, request),
          payInput: (_, { input }: { input: { cents: number; note?: string } }, { request }) =>
            payment('payInput', input.cents, input.note, request),
          slow: async (_, { cents }: { cents: number }, { request }) => {
            const result = payment('slow', cents, null, request);
            await count.gate;
            await new Promise((resolve) => setTimeout(resolve, count.delayMs));
            return result;
          },
          flaky: (_, { cents }: { cents: number }, { request }) => {
            if (count.failures > 0) {
              count.failures -= 1;
              bump(count.runs, 'flaky');
              throw count.failure ?? new Error('the card network is down');
            }
            return payment('flaky', cents, null, request);
          },
          payments: () => ({}),
          plain: (_, { cents }: { cents: number }) => {
            bump(count.runs, 'plain');
            return cents;
          },
        },
      },
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
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as GraphQLAnswer['body'],
  };
}
