/**
 * @module oncely/graphql: idempotent GraphQL mutations for graphql-yoga (and any Envelop server whose context holds
 * the Fetch `request`) and for Apollo Server (and Nest GraphQL's Apollo driver). `useIdempotency(options)` is the
 * yoga plugin, `apolloIdempotency(options)` the Apollo one, on one engine and one field logic; `idempotentDirective`
 * the SDL of the `@idempotent` directive that marks a field; `currentClaim()` the running field's claim (its fencing
 * token).
 */
export { type ApolloIdempotencyPlugin, apolloIdempotency } from './apollo.js';
export type { IdempotencyErrorCode } from './errors.js';
export { idempotentDirective } from './fields.js';
export type { GraphQLIdempotencyOptions } from './options.js';
export { type IdempotencyPlugin, type SchemaChange, useIdempotency } from './plugin.js';
export { currentClaim } from './resolver.js';
