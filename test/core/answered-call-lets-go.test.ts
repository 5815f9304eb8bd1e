/**
 * @module A store call answered in time lets go of its input and its answer at once, though the guard's deadline
 * queue drops its entry only later (the answer marks the deadline done; the queue sweeps done entries lazily). A
 * `complete`'s input holds the outcome, up to `maxBodyBytes`: the queue must not keep bodies alive for a timeout.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../src/core/diagnostics-publish.js';
import { StoreGuard } from '../../src/core/guarded-store.js';
import type { BeginInput, BeginResult, Store } from '../../src/core/store.js';
import { MemoryStore } from '../../src/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects garbage until `ref` is cleared, or gives up after a few rounds; true when it was cleared. */
async function collected(ref: WeakRef<WeakKey>): Promise<boolean> {
  for (let round = 0; round < 5; round++) {
    // A WeakRef keeps its target through the job that made or read it: let the job end first.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    if (ref.deref() === undefined) return true;
  }
  return false;
}

describe('a store call answered in time', () => {
  it('lets go of its input and its answer while its deadline still waits in the queue', async () => {
    // A minute of timeout: no timer drops the entry during the test, and one call is far below a sweep.
    const guard = new StoreGuard(new MemoryStore(), { timeoutMs: 60_000, breaker: false }, publishEvent);
    const begin = (store: Store, input: BeginInput) => store.begin(input);
    let input: BeginInput | undefined = {
      key: 'k',
      fingerprint: 'f'.repeat(1 << 16),
      leaseMs: 30_000,
      retentionMs: 60_000,
    };
    const inputRef = new WeakRef(input);
    let answer: BeginResult | undefined = await guard.callWith('begin', begin, input);
    const answerRef = new WeakRef(answer);
    input = undefined;
    answer = undefined;
    // The guard parks the latest call's settling functions in a module variable until the next call takes them.
    await guard.callWith('begin', begin, {
      key: 'other',
      fingerprint: 'f',
      leaseMs: 1,
      retentionMs: 1,
    });
    expect(await collected(inputRef), 'the input').toBe(true);
    expect(await collected(answerRef), 'the answer').toBe(true);
  });
});
