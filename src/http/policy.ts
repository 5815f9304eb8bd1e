/**
 * @module The framework-free HTTP policy every adapter shares, in one import: how the key is read, how requests are
 * scoped and fingerprinted, which responses and headers are stored, and every answer the layer gives on its own
 * (statuses, headers, RFC 9457 problem bodies). Adapters only translate between their framework and these.
 */
export { acceptedAnswer, answerForError, REPLAYED_HEADER, replayAnswer } from './answers.js';
export type { DeferredResponse, DeferredWork, IdempotencyContext } from './context.js';
export { type Finish, HttpIdempotency, type Running, type Start } from './flow.js';
export { parseKeyHeader } from './key-header.js';
export { type CacheLookup, type LocalCacheOptions, LocalOutcomeCache } from './local-cache.js';
export type { HttpIdempotencyOptions, LongRunningOptions, ResolvedRoute, RouteOptions } from './options.js';
export { defaultKeepStatus, FRAMING_HEADERS, type KeepStatus, storableHeaders } from './outcome-policy.js';
export {
  ERRORS_DOC_URL,
  type HttpAnswer,
  PROBLEM_CONTENT_TYPE,
  PROBLEMS,
  type ProblemType,
  problemAnswer,
  retryAfterSeconds,
} from './problem.js';
export { type FingerprintMode, requestFingerprint } from './request-fingerprint.js';
export { defaultScope, GLOBAL_SCOPE, pathOf, type RequestView, type ScopeFunction } from './scope.js';
