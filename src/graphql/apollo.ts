/**
 * @module `apolloIdempotency(options)`: the Apollo Server plugin (Apollo Server 5's plugin API, which Nest GraphQL's
 * Apollo driver passes on) that makes chosen mutation fields idempotent, with the same fields, key, record, errors
 * and engine walk as the graphql-yoga plugin (schema.ts, resolver.ts). Apollo's types only: nothing of
 * `@apollo/server` is imported at run time, so a yoga user never installs it.
 */
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { Engine } from '../core/engine.js';
import type { RequestHeaders, ServerBinding } from './binding.js';
import { type GraphQLIdempotencyOptions, resolveOptions } from './options.js';
import { makeFieldsIdempotent } from './schema.js';

/** The plugin `new ApolloServer({ plugins })` takes, and the engine behind it (its store, lease and retention). */
export type ApolloIdempotencyPlugin<TContext extends BaseContext = BaseContext> =
  ApolloServerPlugin<TContext> & {
    readonly engine: Engine;
  };

/**
 * Makes mutation fields of an Apollo Server's schema idempotent: the first call with a key runs the resolver and
 * stores its value; a retry with the key gets the stored value back without the resolver running; a concurrent
 * duplicate, other arguments under the key, a bad key and an unreachable store are GraphQL errors on that field
 * alone (`extensions.code` `IDEMPOTENCY_CONFLICT`, `IDEMPOTENCY_MISMATCH`, `IDEMPOTENCY_KEY_INVALID`,
 * `IDEMPOTENCY_UNAVAILABLE`), with the HTTP status and `Retry-After` an HTTP adapter would answer. The fields are
 * chosen when the server starts (`server.start()` rejects a coordinate that names no field); the key's header is
 * read from the HTTP request Apollo Server received.
 *
 * @example
 * import { ApolloServer } from '@apollo/server';
 * import { startStandaloneServer } from '@apollo/server/standalone';
 * import { apolloIdempotency, idempotentDirective } from 'oncely/graphql';
 *
 * const server = new ApolloServer({
 *   typeDefs: [idempotentDirective, 'type Mutation { pay(cents: Int!): String! @idempotent } type Query { ok: Boolean }'],
 *   resolvers: { Mutation: { pay: (_, { cents }) => charge(cents) } },
 *   plugins: [apolloIdempotency({ store: new RedisStore({ client }) })],
 * });
 * await startStandaloneServer(server, { listen: { port: 4000 } });
 */
export function apolloIdempotency<TContext extends BaseContext = BaseContext>(
  options: GraphQLIdempotencyOptions<TContext>,
): ApolloIdempotencyPlugin<TContext> {
  const resolved = resolveOptions(options, 'apolloIdempotency');
  const engine = new Engine(resolved.engine);
  // A resolver sees the context value, never the request: each operation's context value (Apollo Server makes a
  // fresh copy of it per operation, even from a context function that returns one shared object) is mapped to the
  // headers of the HTTP request that carried it, for as long as that context value lives.
  const requests = new WeakMap<object, RequestHeaders>();
  const binding: ServerBinding = {
    name: 'apolloIdempotency',
    headers: (context) =>
      typeof context === 'object' && context !== null ? requests.get(context) : undefined,
    // Apollo Server reads `headers` only when it is a Map (its HeaderMap is one), and drops `http` from the body.
    http: (status, retryAfter) =>
      retryAfter === undefined
        ? { status }
        : { status, headers: new Map([['retry-after', String(retryAfter)]]) },
  };
  const plugin: ApolloIdempotencyPlugin<TContext> = {
    engine,
    async serverWillStart({ schema }) {
      makeFieldsIdempotent(schema, plugin, engine, resolved, binding);
    },
    async requestDidStart({ contextValue, request }) {
      if (request.http !== undefined) requests.set(contextValue, request.http.headers);
    },
  };
  return plugin;
}
