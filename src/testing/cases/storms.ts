/**
 * @module Conformance cases of concurrency: many begins at once on one key (new, or past its lease), of which
 * exactly one acquires, and the optional `waitFor` of a completion.
 */
import assert from 'node:assert/strict';
import { type ConformanceOptions, LEASE_MS, outcome, RETENTION_MS, withStore } from '../harness.js';

const begin = { leaseMs: LEASE_MS, retentionMs: RETENTION_MS };

/** Concurrency: many begins at once on one key, and the optional completion wait. */
export function stormCases(options: ConformanceOptions): void {
  const { it } = options.harness;
  const size = options.stormSize ?? 1_000;

  it(
    `${size} concurrent begins on a new key: exactly one acquires, the rest see it in progress`,
    withStore(options, async ({ store, key }) => {
      const k = key();
      const results = await Promise.all(
        Array.from({ length: size }, () => store.begin({ key: k, fingerprint: 'f', ...begin })),
      );
      const kinds = count(results.map((r) => r.kind));
      assert.deepEqual(kinds, { acquired: 1, inProgress: size - 1 });
    }),
  );

  it(
    `${size} concurrent begins after the lease ran out: exactly one takes over`,
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f', ...begin });
      assert.ok(first.kind === 'acquired');
      clock.advance(LEASE_MS);
      const results = await Promise.all(
        Array.from({ length: size }, () => store.begin({ key: k, fingerprint: 'f', ...begin })),
      );
      assert.deepEqual(count(results.map((r) => r.kind)), { acquired: 1, inProgress: size - 1 });
      const winner = results.find((r) => r.kind === 'acquired');
      assert.ok(winner?.kind === 'acquired' && winner.takeover && winner.token > first.token);
    }),
  );

  it(
    `${size} concurrent begins on a completed key all replay the same bytes`,
    withStore(options, async ({ store, key }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f', ...begin });
      assert.ok(first.kind === 'acquired');
      await store.complete({
        key: k,
        token: first.token,
        outcome: outcome('{"id":"pay_1"}'),
        retentionMs: RETENTION_MS,
      });
      const results = await Promise.all(
        Array.from({ length: size }, () => store.begin({ key: k, fingerprint: 'f', ...begin })),
      );
      for (const r of results) {
        assert.ok(r.kind === 'replay');
        assert.equal(Buffer.from(r.outcome.body).toString(), '{"id":"pay_1"}');
      }
    }),
  );

  it(
    'completes racing on one key: only the current token wins',
    withStore(options, async ({ store, key, clock }) => {
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f', ...begin });
      assert.ok(first.kind === 'acquired');
      clock.advance(LEASE_MS);
      const second = await store.begin({ key: k, fingerprint: 'f', ...begin });
      assert.ok(second.kind === 'acquired');
      const [stale, current] = await Promise.all([
        store.complete({ key: k, token: first.token, outcome: outcome('stale'), retentionMs: RETENTION_MS }),
        store.complete({
          key: k,
          token: second.token,
          outcome: outcome('current'),
          retentionMs: RETENTION_MS,
        }),
      ]);
      assert.deepEqual([stale.kind, current.kind], ['fenced', 'ok']);
    }),
  );

  it(
    'waitFor (when the store has it) wakes on completion and times out otherwise',
    withStore(options, async ({ store, key }) => {
      if (store.waitFor === undefined) return;
      const k = key();
      const first = await store.begin({ key: k, fingerprint: 'f', ...begin });
      assert.ok(first.kind === 'acquired');
      assert.equal(await store.waitFor(k, { timeoutMs: 50 }), false);
      const waiting = store.waitFor(k, { timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      await store.complete({
        key: k,
        token: first.token,
        outcome: outcome('done'),
        retentionMs: RETENTION_MS,
      });
      assert.equal(await waiting, true);
      assert.equal(await store.waitFor(k, { timeoutMs: 10_000 }), true, 'a settled key resolves at once');
    }),
  );
}

function count(kinds: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of kinds) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}
