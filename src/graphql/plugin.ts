/**
 * @module `useIdempotency(options)`: the Envelop plugin (graphql-yoga's plugin shape) that makes chosen mutation
 * fields idempotent. When the server sets its schema, the plugin wraps the resolvers of those fields in place
 * (schema.ts); every other field, and every query and subscription, runs untouched. The key's header is read from
 * the Fetch `request` in yoga's context.
 */
import type { GraphQLSchema } from 'graphql';
import { Engine } from '../core/engine.js';
import type { ServerBinding } from './binding.js';
import { type GraphQLIdempotencyOptions, resolveOptions } from './options.js';
import { makeFieldsIdempotent } from './schema.js';

/** What graphql-yoga and Envelop hand a plugin when the schema is set. */
export interface SchemaChange {
  readonly schema: GraphQLSchema;
}

/**
 * The plugin: structurally an Envelop `Plugin`, so `createYoga({ plugins: [useIdempotency(…)] })` and
 * `envelop({ plugins })` take it without oncely depending on either's types.
 */
export interface IdempotencyPlugin {
  onSchemaChange(change: SchemaChange): void;
  /** The engine behind the plugin (its store, lease and retention). */
  readonly engine: Engine;
}

/** The parts of a graphql-yoga (or any Fetch-based server's) context the plugin reads. */
interface FetchContext {
  readonly request?: { readonly headers?: { get(name: string): string | null } };
}

const yoga: ServerBinding = {
  name: 'useIdempotency',
  headers: (context) => (context as FetchContext | null)?.request?.headers,
  // yoga copies `headers` with Object.assign: a plain object.
  http: (status, retryAfter) =>
    retryAfter === undefined ? { status } : { status, headers: { 'retry-after': String(retryAfter) } },
};

/**
 * Makes mutation fields idempotent: the first call with a key runs the resolver and stores its value; a retry with
 * the key gets the stored value back without the resolver running; a concurrent duplicate, other arguments under
 * the key, a bad key and an unreachable store are GraphQL errors on that field alone (`extensions.code`
 * `IDEMPOTENCY_CONFLICT`, `IDEMPOTENCY_MISMATCH`, `IDEMPOTENCY_KEY_INVALID`, `IDEMPOTENCY_UNAVAILABLE`). A resolver
 * that throws lets the key go, so a retry runs it again.
 *
 * @example
 * import { createYoga, createSchema } from 'graphql-yoga';
 * import { idempotentDirective, useIdempotency } from 'oncely/graphql';
 *
 * const yoga = createYoga({
 *   schema: createSchema({
 *     typeDefs: [idempotentDirective, 'type Mutation { pay(cents: Int!): String! @idempotent } type Query { ok: Boolean }'],
 *     resolvers: { Mutation: { pay: (_, { cents }) => charge(cents) } },
 *   }),
 *   plugins: [useIdempotency({ store: new RedisStore({ client }) })],
 * });
 */
export function useIdempotency<TContext = unknown>(
  options: GraphQLIdempotencyOptions<TContext>,
): IdempotencyPlugin {
  const resolved = resolveOptions(options, yoga.name);
  const engine = new Engine(resolved.engine);
  const plugin: IdempotencyPlugin = {
    engine,
    onSchemaChange({ schema }) {
      makeFieldsIdempotent(schema, plugin, engine, resolved, yoga);
    },
  };
  return plugin;
}
