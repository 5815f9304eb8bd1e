/**
 * @module `oncely/testing`: `runStoreConformance`, the contract suite every store must pass (ours and third-party
 * ones), with its fake clock, its options and the model it checks stores against.
 */
export { runStoreConformance } from './conformance.js';
export { FakeClock } from './fake-clock.js';
export type { ConformanceOptions, StoreFactoryContext, TestHarness } from './harness.js';
export { KeyModel, type ModelRecord } from './model.js';
