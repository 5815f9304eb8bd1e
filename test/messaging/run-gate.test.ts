import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunGate } from '../../src/messaging/run-gate.js';

describe('RunGate', () => {
  it('never runs an exclusive run alongside another run, and every run finishes (random schedules)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ exclusive: fc.boolean(), startAt: fc.nat(20), lasts: fc.nat(5) }), {
          minLength: 1,
          maxLength: 30,
        }),
        async (runs) => {
          const gate = new RunGate();
          let shared = 0;
          let exclusive = 0;
          let violations = 0;
          const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
          await Promise.all(
            runs.map(async (run) => {
              await tick(run.startAt);
              await gate.run(run.exclusive, async () => {
                if (run.exclusive) exclusive++;
                else shared++;
                if (exclusive > 1 || (exclusive === 1 && shared > 0)) violations++;
                await tick(run.lasts);
                if (run.exclusive) exclusive--;
                else shared--;
              });
            }),
          );
          expect(violations).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a waiting exclusive run is not overtaken by shared runs that arrive after it', async () => {
    const gate = new RunGate();
    const order: string[] = [];
    let release = () => {};
    const first = gate.run(false, () =>
      new Promise<void>((resolve) => (release = resolve)).then(() => order.push('s1')),
    );
    const second = gate.run(true, async () => order.push('x'));
    const third = gate.run(false, async () => order.push('s2'));
    release();
    await Promise.all([first, second, third]);
    expect(order).toEqual(['s1', 'x', 's2']);
  });
});
