/**
 * @module `runStoreConformance`: the entry point of the contract suite, which runs every group of cases against the
 * caller's store under the caller's test runner.
 */
import { expiryCases } from './cases/expiry.js';
import { fencingCases } from './cases/fencing.js';
import { inspectionRecordCases } from './cases/inspection-record.js';
import { inspectionSurveyCases } from './cases/inspection-survey.js';
import { labelCases } from './cases/labels.js';
import { propertyCases } from './cases/property.js';
import { stormCases } from './cases/storms.js';
import { transitionCases } from './cases/transitions.js';
import type { ConformanceOptions } from './harness.js';

/**
 * The contract every `Store` must pass, ours and third-party ones alike: transitions and fencing, lease expiry
 * and takeover, retention, labels kept from the first claim, tokens that keep rising across delete and expiry,
 * concurrency storms, and a model-based property test against a pure model of the state machine. The store must
 * read time from the fake clock it is given (`createStore({ clock })`).
 *
 * @example
 * import { describe, it } from 'vitest'; // or 'node:test'
 * import { runStoreConformance } from 'oncely/testing';
 * runStoreConformance({ name: 'my store', harness: { describe, it }, createStore: ({ clock }) => new MyStore({ clock }) });
 */
export function runStoreConformance(options: ConformanceOptions): void {
  options.harness.describe(`Store conformance: ${options.name}`, () => {
    transitionCases(options);
    expiryCases(options);
    fencingCases(options);
    labelCases(options);
    stormCases(options);
    propertyCases(options);
    inspectionSurveyCases(options);
    inspectionRecordCases(options);
  });
}
