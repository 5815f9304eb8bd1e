/**
 * @module The Apollo Server app the oncely/graphql Apollo tests drive: the payments schema and resolvers of app.ts
 * on a real Apollo Server 5, with `apolloIdempotency` and `startStandaloneServer` on a loopback port. The context
 * carries the request's Idempotency-Key (for the resolvers' per-key counts) and its tenant header (for a `scope`).
 */
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import type { Store } from 'oncely';
import { apolloIdempotency, type GraphQLIdempotencyOptions, idempotentDirective } from 'oncely/graphql';
import { type Counters, resolvers, typeDefs } from './app.js';

export interface ApolloContext {
  readonly idempotencyKey: string | null;
  readonly tenant: string;
}

export interface ApolloApp {
  readonly server: ApolloServer<ApolloContext>;
  /** Where to post operations: `http://127.0.0.1:<port>/`. */
  readonly url: string;
  stop(): Promise<void>;
}

const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value);

/** The Apollo Server (not started), for tests of what `start()` refuses. */
export function apolloServer(
  store: Store,
  count: Counters,
  options: Omit<GraphQLIdempotencyOptions<ApolloContext>, 'store'> = {},
): ApolloServer<ApolloContext> {
  return new ApolloServer<ApolloContext>({
    typeDefs: [idempotentDirective, typeDefs],
    resolvers: resolvers<ApolloContext>(count, (context) => context.idempotencyKey),
    plugins: [apolloIdempotency<ApolloContext>({ store, breaker: false, ...options })],
    // The errors' extensions as a client in production sees them (no stacktrace), whatever NODE_ENV says.
    includeStacktraceInErrorResponses: false,
    stopOnTerminationSignals: false,
  });
}

/** The server started on a free loopback port. */
export async function apolloApp(
  store: Store,
  count: Counters,
  options: Omit<GraphQLIdempotencyOptions<ApolloContext>, 'store'> = {},
): Promise<ApolloApp> {
  const server = apolloServer(store, count, options);
  const { url } = await startStandaloneServer(server, {
    listen: { port: 0, host: '127.0.0.1' },
    context: async ({ req }) => ({
      idempotencyKey: one(req.headers['idempotency-key']) ?? null,
      tenant: one(req.headers['x-tenant']) ?? '',
    }),
  });
  return { server, url, stop: () => server.stop() };
}
