/**
 * @module oncely/trpc: idempotent tRPC 11 mutations. `idempotent(options)` is the procedure middleware;
 * `idempotencyErrorData(error)` reads a refusal's code and retry-after for an `errorFormatter` or `responseMeta`.
 */
export {
  type IdempotencyErrorCode,
  type IdempotencyErrorData,
  idempotencyErrorData,
} from './errors.js';
export type { HeaderSource } from './headers.js';
export { type IdempotencyContextOverride, type IdempotentMiddleware, idempotent } from './middleware.js';
export type { TrpcIdempotencyOptions } from './options.js';
