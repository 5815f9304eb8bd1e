/**
 * @module Making a schema's chosen fields idempotent, in place: the one step both plugins take when their server
 * sets its schema (graphql-yoga's `onSchemaChange`, Apollo Server's `serverWillStart`). Each chosen field's resolver
 * is wrapped once, as Envelop's own resolver plugins do; every other field runs untouched.
 */
import { defaultFieldResolver, type GraphQLSchema } from 'graphql';
import type { Engine } from '../core/engine.js';
import { InvalidOptionsError } from '../core/errors.js';
import type { ServerBinding } from './binding.js';
import { idempotentFields } from './fields.js';
import type { ResolvedOptions } from './options.js';
import { idempotentResolver } from './resolver.js';

/** Marks a resolver this module wrapped, with the plugin that did, so a schema is never wrapped twice. */
const WRAPPED_BY = Symbol('oncely.graphql.wrappedBy');

/**
 * Wraps the resolvers of the fields `options` choose in `schema`, for the plugin `owner`. Setting the same schema
 * again is a no-op; a schema another oncely plugin wrapped (one schema object given to two servers, or to a yoga
 * and an Apollo Server) throws `InvalidOptionsError`: each field would take two keys' records per call.
 */
export function makeFieldsIdempotent<TContext>(
  schema: GraphQLSchema,
  owner: object,
  engine: Engine,
  options: ResolvedOptions<TContext>,
  binding: ServerBinding,
): void {
  for (const found of idempotentFields(schema, options.fields, options.directive, binding.name)) {
    const { field, coordinate } = found;
    const current = field.resolve as (typeof field.resolve & { [WRAPPED_BY]?: object }) | undefined;
    const wrappedBy = current?.[WRAPPED_BY];
    if (wrappedBy === owner) continue;
    if (wrappedBy !== undefined)
      throw new InvalidOptionsError(
        `${binding.name}: ${coordinate} is made idempotent by another oncely GraphQL plugin already (one schema object, two servers?)`,
      );
    const wrapped = idempotentResolver(found, current ?? defaultFieldResolver, engine, options, binding);
    field.resolve = Object.assign(wrapped, { [WRAPPED_BY]: owner });
  }
}
