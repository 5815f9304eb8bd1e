export { runStoreConformance } from './conformance.js';
export { FakeClock } from './fake-clock.js';
export type { ConformanceOptions, StoreFactoryContext, TestHarness } from './harness.js';
export { KeyModel, type ModelRecord } from './model.js';
