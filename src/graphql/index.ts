/**
 * @module oncely/graphql: idempotent GraphQL mutations for graphql-yoga (and any Envelop server whose context holds
 * the Fetch `request`). `useIdempotency(options)` is the plugin; `idempotentDirective` the SDL of the `@idempotent`
 * directive that marks a field; `currentClaim()` the running field's claim (its fencing token).
 */
export type { IdempotencyErrorCode } from './errors.js';
export { idempotentDirective } from './fields.js';
export type { GraphQLIdempotencyOptions } from './options.js';
export { type IdempotencyPlugin, type SchemaChange, useIdempotency } from './plugin.js';
export { currentClaim } from './resolver.js';
