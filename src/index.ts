export { CircuitBreaker, type CircuitBreakerOptions } from './core/circuit-breaker.js';
export { type Codec, jsonCodec, structuredCodec } from './core/codec.js';
export {
  Engine,
  type EngineOptions,
  type ExecuteRequest,
  type ExecuteResult,
  type ExecutionContext,
  type Verdict,
} from './core/engine.js';
export * from './core/errors.js';
export type {
  EventHandler,
  FencedOperation,
  OncelyEvent,
  OncelyEventType,
  ReleaseReason,
} from './core/events.js';
export { canonicalJson, type FingerprintPart, fingerprintOf } from './core/fingerprint.js';
export {
  type Execution,
  type IdempotentFunction,
  type IdempotentOptions,
  idempotent,
} from './core/idempotent.js';
export { MAX_KEY_LENGTH, scopedKey, validateKey } from './core/key.js';
export {
  type BlobStore,
  type EnvelopeOptions,
  type OpenedOutcome,
  type Outcome,
  openOutcome,
  sealOutcome,
} from './core/record.js';
export type {
  BeginInput,
  BeginResult,
  BodyEncoding,
  BodyStorage,
  CompleteInput,
  HeaderPairs,
  KeyRecord,
  KeyState,
  PurgeOptions,
  ReleaseInput,
  RenewInput,
  Store,
  StoredOutcome,
  StoreStats,
  TransactionClaim,
  TransactionInput,
  TransactionResult,
  TransactionSettlement,
  TransitionResult,
  WaitForOptions,
} from './core/store.js';
export { nextFencingToken } from './core/store.js';
export {
  actionFor,
  Inbox,
  type InboxAction,
  type InboxContext,
  type InboxHandler,
  type InboxOptions,
  type InboxOutcome,
  type ParkedInfo,
} from './messaging/consumer.js';
export { MemoryStore, type MemoryStoreOptions, sharedMemoryStore } from './stores/memory.js';
