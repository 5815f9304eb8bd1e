/**
 * @module oncely/store: for store authors, the Store contract's inputs and results, how outcomes are sealed for
 * storage, and the fencing-token rule; for anyone below the `Engine` or beside the `Inbox`, the key rules
 * (`validateKey`, `MAX_KEY_LENGTH`), the storage key (`scopedKey`), record labels (`checkLabel`, `labelOf`),
 * fingerprints (`fingerprintOf`, `canonicalJson`), what a broker does with an inbox outcome (`actionFor`), and
 * the store inspection interface (`StoreInspector`, with `SurveyTally` and `viewOf` to implement it).
 * Run `runStoreConformance` from `oncely/testing` against a new store before trusting it.
 */
export { CircuitBreaker, type CircuitBreakerOptions } from './core/circuit-breaker.js';
export { canonicalJson, type FingerprintPart, fingerprintOf } from './core/fingerprint.js';
// The inspection interface a store offers tools (`Store.inspector`), and the tally for stores that walk records.
export type {
  OutcomeView,
  RecordMark,
  RecordSummary,
  RecordView,
  RecordViewOptions,
  StateCounts,
  StoreInspector,
  Survey,
  SurveyOptions,
} from './core/inspection.js';
export { isMarked, summaryOf, viewOf } from './core/inspection-records.js';
export { MAX_KEY_LENGTH, scopedKey, validateKey } from './core/key.js';
export { checkLabel, isLabel, labelOf, MAX_LABEL_LENGTH } from './core/label.js';
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
export { checkSurvey, SurveyTally } from './core/survey-tally.js';
export { actionFor, type InboxAction } from './messaging/consumer.js';
