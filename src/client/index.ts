/**
 * @module `oncely/client`: the caller's half of the Idempotency-Key protocol. Web APIs only (fetch, AbortSignal,
 * timers), so it runs in Node, browsers, Deno, Bun and workers; nothing here imports from node:.
 */
// The declarations name fetch's types (Response, RequestInit, URL): the directive, kept in the .d.ts, loads them
// from TypeScript's DOM lib for consumers whose tsconfig has neither that lib nor Node's types (types: []).
/// <reference lib="dom" preserve="true" />

// The errors a caller meets here too, without importing the server side of the package.
export {
  InvalidKeyError,
  InvalidOptionsError,
  isInvalidKeyError,
  isInvalidOptionsError,
  isOncelyError,
  OncelyError,
  type OncelyErrorCode,
} from '../core/errors.js';
export {
  createClient,
  type IdempotentClient,
  type IdempotentRequestInit,
  type IdempotentResult,
} from './client.js';
export {
  BodyNotReplayableError,
  DeadlineExceededError,
  isBodyNotReplayableError,
  isDeadlineExceededError,
  isKeyRejectedError,
  isRetriesExhaustedError,
  KeyRejectedError,
  type KeyRejection,
  type NotReplayableReason,
  type ProblemDetails,
  RetriesExhaustedError,
} from './errors.js';
export { newKey } from './key.js';
export type { ClientOptions, FetchFunction, RetryEvent, RetryLimits } from './options.js';
export type { RetryReason } from './retry-policy.js';
