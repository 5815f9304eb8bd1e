/**
 * @module The demo's verdict: whether every key ran once and every client got the same answer, as text.
 */
import { renderTable } from '../table.js';
import type { KeyOutcome } from './storm.js';

export interface DemoVerdict {
  readonly text: string;
  /** True when every key ran its handler exactly once and every client got the same 2xx body. */
  readonly exactlyOnce: boolean;
}

/**
 * Joins what the clients saw with what the service's ledger counted (`executions`), prints the totals and the
 * per-key ledger, and judges: any key executed more than once, or answered with two different bodies, fails.
 */
export function renderReport(
  outcomes: readonly KeyOutcome[],
  executions: ReadonlyMap<string, number>,
  seconds: number,
): DemoVerdict {
  const sum = (pick: (o: KeyOutcome) => number) => outcomes.reduce((total, o) => total + pick(o), 0);
  const requests = sum((o) => o.fresh + o.replayed + o.failures + o.conflicts);
  const executed = outcomes.reduce((total, o) => total + (executions.get(o.key) ?? 0), 0);
  const totals = renderTable(
    ['requests', 'executions', 'replays', 'conflicts (409, retried)', 'failures', 'seconds'],
    [
      [
        requests,
        executed,
        sum((o) => o.replayed),
        sum((o) => o.conflicts),
        sum((o) => o.failures),
        Number(seconds.toFixed(2)),
      ],
    ],
  );
  const ledger = renderTable(
    ['key', 'executions', 'fresh 201', 'replayed', '409 seen', 'distinct bodies', 'verdict'],
    outcomes.map((o) => {
      const ran = executions.get(o.key) ?? 0;
      const ok = ran === 1 && o.bodies.size === 1 && o.failures === 0;
      return [o.key, ran, o.fresh, o.replayed, o.conflicts, o.bodies.size, ok ? 'once' : 'FAILED'];
    }),
  );
  const bad = outcomes.filter(
    (o) => (executions.get(o.key) ?? 0) !== 1 || o.bodies.size !== 1 || o.failures > 0,
  );
  const verdict =
    bad.length === 0
      ? `OK: ${outcomes.length} keys, each executed exactly once; every client got a byte-identical answer.`
      : `FAILED: ${bad.length} of ${outcomes.length} keys did not execute exactly once with one answer.`;
  return { text: `${totals}\n\nPer-key ledger\n${ledger}\n\n${verdict}`, exactlyOnce: bad.length === 0 };
}
