import { expect } from 'vitest';
import { MemoryStore, type Store } from '../../../src/index.js';
import type { InboxOutcome } from '../../../src/messaging/consumer.js';
import { faulty } from '../../unit/faulty-store.js';
import { until } from './pg.js';

/** Inbox options that make a store failure show quickly: a short call timeout and lease, no breaker. */
export const outageInboxOptions = { storeTimeoutMs: 200, leaseMs: 300, breaker: false } as const;

export interface OutageConsumer {
  stop(): Promise<void>;
}

/**
 * A broker helper must acknowledge only what the store has recorded. One message goes through a consumer whose
 * store (a real MemoryStore behind a fault switch) first fails every `complete`, then lets it hang past
 * `storeTimeoutMs`, then recovers. While it fails or hangs the message must come back (outcome `failed`, the
 * handler runs again); once it recovers it is processed and acknowledged, and the broker holds nothing more.
 * A helper that acknowledged a `failed` outcome would lose the message: it would never be processed.
 */
export async function acksOnlyWhatIsStored(broker: {
  start(
    store: Store,
    handler: () => void,
    onOutcome: (outcome: InboxOutcome<unknown>) => void,
  ): Promise<OutageConsumer>;
  send(): Promise<void>;
  /** True once the broker holds nothing unacknowledged for the consumer. */
  drained(): Promise<boolean>;
}): Promise<void> {
  const store = faulty(new MemoryStore());
  store.fail.add('complete');
  let runs = 0;
  const outcomes: InboxOutcome<unknown>[] = [];
  const consumer = await broker.start(
    store,
    () => {
      runs++;
    },
    (outcome) => outcomes.push(outcome),
  );
  const failures = () => outcomes.filter((o) => o.kind === 'failed');
  try {
    await broker.send();
    await until(() => failures().length >= 1, 20_000);
    expect(String((failures()[0] as { error: unknown }).error)).toContain('injected complete failure');

    store.fail.delete('complete');
    store.hang.add('complete');
    const before = failures().length;
    await until(() => failures().length > before && runs >= 2, 20_000);
    expect(String((failures().at(-1) as { error: unknown }).error)).toMatch(/timed out after 200 ms/);

    store.hang.delete('complete');
    await until(() => outcomes.some((o) => o.kind === 'processed'), 20_000);
    await until(() => broker.drained(), 20_000);
    const settled = outcomes.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Acknowledged once stored: no delivery after the one that was processed.
    expect(outcomes.length).toBe(settled);
  } finally {
    await consumer.stop();
  }
  expect(outcomes.at(-1)?.kind).toBe('processed');
  expect(outcomes.every((o) => o.kind === 'failed' || o.kind === 'busy' || o.kind === 'processed')).toBe(
    true,
  );
  expect(runs).toBeGreaterThanOrEqual(3);
}
