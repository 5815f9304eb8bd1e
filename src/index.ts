/**
 * @module oncely: the user's API, what an application needs to make effects happen once (`idempotent`, the
 * `Engine`, the memory store, the `Inbox`, the errors). What a store or broker-helper author needs (the Store
 * contract's inputs and results, sealing, fencing tokens, key scoping and fingerprints, `actionFor`) is in
 * `oncely/store`.
 */

export type { CircuitBreakerOptions } from './core/circuit-breaker.js';
export type { Claim, CompleteOptions, ExecutionContext } from './core/claim.js';
export { type Codec, jsonCodec, structuredCodec } from './core/codec.js';
export {
  type ClaimMessage,
  DIAGNOSTICS_CHANNELS,
  type DiagnosticsChannelName,
  type DiagnosticsMessages,
  type FencedMessage,
  type KeyMessage,
  type RejectedMessage,
  type RejectionCode,
  type ReleasedMessage,
  type ReplayedMessage,
  type StoreUnavailableMessage,
  type TokenMessage,
} from './core/diagnostics.js';
export type { EncryptionKey, EncryptionOptions } from './core/encryption-keys.js';
export {
  type BeginRequest,
  type Begun,
  Engine,
  type ExecuteRequest,
  type ExecuteResult,
  type Verdict,
} from './core/engine.js';
export type { EngineOptions } from './core/engine-options.js';
export * from './core/errors.js';
export type {
  EventHandler,
  FencedOperation,
  OncelyEvent,
  OncelyEventType,
  ReleaseReason,
} from './core/events.js';
export type {
  OutcomeView,
  RecordSummary,
  RecordView,
  RecordViewOptions,
  StateCounts,
  StoreInspector,
  Survey,
  SurveyOptions,
} from './core/inspection.js';
export type {
  EngineProbe,
  ExecutionProbe,
  Instrumentation,
  StoreOperation,
} from './core/instrumentation.js';
export type { BlobStore, OpenedOutcome, Outcome } from './core/record.js';
export type { HeaderPairs, KeyRecord, KeyState, Store, StoreStats } from './core/store.js';
export {
  type Execution,
  type IdempotentFunction,
  type IdempotentOptions,
  idempotent,
} from './idempotent.js';
export {
  Inbox,
  type InboxAction,
  type InboxContext,
  type InboxHandleOptions,
  type InboxHandler,
  type InboxOptions,
  type InboxOutcome,
  type ParkedInfo,
} from './messaging/consumer.js';
export type {
  Delivery,
  InboxInstrumentation,
  InboxOutcomeKind,
  InboxProbe,
  MessageSource,
} from './messaging/instrumentation.js';
export { MemoryStore, type MemoryStoreOptions, sharedMemoryStore } from './stores/memory.js';
