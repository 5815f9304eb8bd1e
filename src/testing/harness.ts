/**
 * @module What every conformance case is built from: the runner-neutral harness (`describe`/`it` of any runner), the
 * suite's options, and `withStore`, which gives each case a fresh store and fake clock and always disposes of the
 * store.
 */
import { randomUUID } from 'node:crypto';
import type { Store, StoredOutcome } from '../core/store.js';
import { FakeClock } from './fake-clock.js';

/**
 * The test functions of whatever runner the caller uses: vitest, jest, mocha and `node:test` all fit, since the
 * suite asserts with `node:assert` and needs nothing else from the runner.
 */
export interface TestHarness {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>): void;
}

export interface StoreFactoryContext {
  /** The store must read time from this clock (stores take a `clock` option for exactly this). */
  readonly clock: () => number;
}

export interface ConformanceOptions {
  /** Shown in the suite's name. */
  readonly name: string;
  /** Called once per test with a fresh fake clock. Keys are random per test, so stores may share a backend. */
  readonly createStore: (context: StoreFactoryContext) => Store | Promise<Store>;
  /** Called after each test with the store it used. Default: `store.close?.()`. */
  readonly destroyStore?: (store: Store) => Promise<void>;
  readonly harness: TestHarness;
  /** Concurrent begins in the storm tests. Default 1,000. */
  readonly stormSize?: number;
  /** Runs of the model-based property test. Default 100. */
  readonly propertyRuns?: number;
}

export interface Fixture {
  readonly store: Store;
  readonly clock: FakeClock;
  /** A fresh key, unique to this test. */
  key(label?: string): string;
}

export const LEASE_MS = 10_000;
export const RETENTION_MS = 60_000;

/** Runs `body` against a fresh store and clock, and always disposes of the store. */
export function withStore(
  options: ConformanceOptions,
  body: (fixture: Fixture) => Promise<void>,
): () => Promise<void> {
  return async () => {
    const clock = new FakeClock();
    const store = await options.createStore({ clock: clock.now });
    const run = randomUUID();
    try {
      await body({ store, clock, key: (label = 'k') => `conformance:${run}:${label}` });
    } finally {
      await (options.destroyStore ? options.destroyStore(store) : store.close?.());
    }
  };
}

export function outcome(text: string, status = 201): StoredOutcome {
  return {
    status,
    headers: [['content-type', 'application/json']],
    body: Buffer.from(text, 'utf8'),
    encoding: 'identity',
    storage: 'inline',
  };
}
