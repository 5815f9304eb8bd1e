import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { ERRORS_DOC_URL } from '../../../src/http/problem.js';
import type { Store } from '../../../src/index.js';
import { scopedKey } from '../../../src/store.js';
import type { AdapterHarness, AppUnderTest, TestResponse } from './harness.js';
import { Counters, Gates } from './routes.js';

/** A store as the suite runs it: memory or Redis (or any other `Store`). */
export interface StoreSetup {
  readonly name: string;
  create(): Promise<Store> | Store;
  destroy?(store: Store): Promise<void>;
}

export interface SendOptions {
  readonly key?: string | undefined;
  readonly body?: string | Uint8Array;
  readonly headers?: Record<string, string>;
  readonly method?: string;
  readonly contentType?: string;
}

export interface Fixture {
  readonly app: AppUnderTest;
  readonly store: Store;
  readonly counters: Counters;
  readonly gates: Gates;
  /** A fresh key unique to this test. */
  key(label?: string): string;
  send(path: string, options?: SendOptions): Promise<TestResponse>;
}

// Silent unless a case passes its own logger: most cases send keyed requests without any client identity.
export const SUITE_DEFAULTS = { maxBodyBytes: 4096, logger: false } as const;

/** Builds the adapter's app on a fresh store with the suite's defaults and `options` over them; always cleans up. */
export async function withApp(
  harness: AdapterHarness,
  setup: StoreSetup,
  options: Record<string, unknown>,
  body: (fixture: Fixture) => Promise<void>,
): Promise<void> {
  const store = await setup.create();
  const counters = new Counters();
  const gates = new Gates();
  const app = await harness.build({
    store,
    options: { ...SUITE_DEFAULTS, store, ...options },
    counters,
    gates,
  });
  const run = randomUUID();
  try {
    await body({
      app,
      store,
      counters,
      gates,
      key: (label = 'k') => `${label}-${run}`,
      send: (
        path,
        {
          key,
          body: payload = '{"amount":100,"currency":"EUR"}',
          headers = {},
          method = 'POST',
          contentType = 'application/json',
        } = {},
      ) =>
        app.request({
          method,
          path,
          headers: {
            'content-type': contentType,
            ...(key === undefined ? {} : { 'idempotency-key': key }),
            ...headers,
          },
          ...(method === 'GET' ? {} : { body: payload }),
        }),
    });
  } finally {
    await app.close();
    await (setup.destroy ? setup.destroy(store) : store.close?.());
  }
}

/** The storage id of a key under the default scope (method, route, Authorization; no other identity carrier). */
export function defaultId(method: string, route: string, key: string, authorization = ''): string {
  return scopedKey(`${method} ${route}\n${authorization}`, key);
}

export function expectProblem(response: TestResponse, type: string, status: number): Record<string, unknown> {
  expect(response.status, response.body.toString()).toBe(status);
  expect(response.headers['content-type']).toBe('application/problem+json');
  const problem = response.json();
  expect(problem.type).toBe(`${ERRORS_DOC_URL}#${type}`);
  expect(problem.status).toBe(status);
  expect(typeof problem.title).toBe('string');
  return problem;
}

export function expectReplayOf(replay: TestResponse, original: TestResponse): void {
  expect(replay.status).toBe(original.status);
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.body.equals(original.body)).toBe(true);
  expect(replay.headers['content-type']).toBe(original.headers['content-type']);
}

export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
