// For store authors: the Store contract's inputs and results, how outcomes are sealed for storage, and the
// fencing-token rule. Run `runStoreConformance` from `oncely/testing` against a new store before trusting it.
export { CircuitBreaker, type CircuitBreakerOptions } from './core/circuit-breaker.js';
export {
  type EnvelopeOptions,
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
  StoreEndpoint,
  StoreStats,
  StoreTransaction,
  TransactionBeginInput,
  TransactionBeginResult,
  TransitionResult,
  WaitForOptions,
} from './core/store.js';
export { nextFencingToken } from './core/store.js';
