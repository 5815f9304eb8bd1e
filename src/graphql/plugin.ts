/**
 * @module `useIdempotency(options)`: the Envelop plugin (graphql-yoga's plugin shape) that makes chosen mutation
 * fields idempotent. When the server sets its schema, the plugin wraps the resolvers of those fields in place, as
 * Envelop's own resolver plugins do; every other field, and every query and subscription, runs untouched.
 */
import { defaultFieldResolver, type GraphQLSchema } from 'graphql';
import { Engine } from '../core/engine.js';
import { InvalidOptionsError } from '../core/errors.js';
import { idempotentFields } from './fields.js';
import { type GraphQLIdempotencyOptions, resolveOptions } from './options.js';
import { idempotentResolver } from './resolver.js';

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

/** Marks a resolver this module wrapped, with the plugin that did, so a schema is never wrapped twice. */
const WRAPPED_BY = Symbol('oncely.graphql.wrappedBy');

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
  const resolved = resolveOptions(options);
  const engine = new Engine(resolved.engine);
  const plugin: IdempotencyPlugin = {
    engine,
    onSchemaChange({ schema }) {
      for (const found of idempotentFields(schema, resolved.fields, resolved.directive)) {
        const { field, coordinate } = found;
        const current = field.resolve as
          | (typeof field.resolve & { [WRAPPED_BY]?: IdempotencyPlugin })
          | undefined;
        const owner = current?.[WRAPPED_BY];
        if (owner === plugin) continue;
        if (owner !== undefined)
          throw new InvalidOptionsError(
            `useIdempotency: ${coordinate} is made idempotent by another useIdempotency plugin already (one schema object, two servers?)`,
          );
        const wrapped = idempotentResolver(found, current ?? defaultFieldResolver, engine, resolved);
        field.resolve = Object.assign(wrapped, { [WRAPPED_BY]: plugin });
      }
    },
  };
  return plugin;
}
