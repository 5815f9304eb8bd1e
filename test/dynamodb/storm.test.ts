/**
 * Claims racing from 4 processes, each with its own client and store, on one dynalite: one winner per key,
 * a takeover after its lease with a higher token and the next attempt, the stale owner fenced, and every later
 * claim a replay of the one outcome stored.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayProcesses } from '../postgres/workers/processes.js';
import { type Backend, returnItemOnRefusal, startDynalite } from './support/dynalite.js';

const PROCESSES = 4;
const PER_PROCESS = 25;
const worker = new URL('./workers/claims.ts', import.meta.url).pathname;

interface Report {
  pid: number;
  kinds: Record<string, number>;
  acquired: { token: number; attempt: number; takeover: boolean }[];
  bodies: string[];
  errors: string[];
}

let backend: Backend;
let processes: PayProcesses;

beforeAll(async () => {
  returnItemOnRefusal(true);
  backend = await startDynalite();
  processes = new PayProcesses(PROCESSES, { endpoint: backend.endpoint, table: 'oncely_keys' }, worker);
  expect(await processes.read()).toEqual(Array(PROCESSES).fill('ready'));
});
afterAll(async () => {
  await processes?.stop();
  await backend?.close();
});

async function storm(key: string, leaseMs: number) {
  processes.send(`begin ${key} ${PER_PROCESS} ${leaseMs}`);
  const reports = (await processes.read()).map((line) => JSON.parse(line) as Report);
  const kinds: Record<string, number> = {};
  for (const report of reports)
    for (const [kind, count] of Object.entries(report.kinds)) kinds[kind] = (kinds[kind] ?? 0) + count;
  const winners = reports.flatMap((report, index) => report.acquired.map((claim) => ({ ...claim, index })));
  return {
    kinds,
    winners,
    bodies: [...new Set(reports.flatMap((r) => r.bodies))],
    errors: reports.flatMap((r) => r.errors),
  };
}

/** complete (with `body`) or renew (for `leaseMs`) from the process at `index`. */
async function transition(
  index: number,
  verb: 'complete' | 'renew',
  key: string,
  token: number,
  arg: string,
) {
  processes.send(`${verb} ${key} ${token} ${arg}`, index);
  const [line] = await processes.read(index);
  return JSON.parse(line ?? '{}') as { kind: string };
}

describe(`${PROCESSES} processes × ${PER_PROCESS} claims on one key`, () => {
  it('one winner, then one takeover with a higher token, the stale owner fenced, then replays only', async () => {
    const key = randomUUID();
    const total = PROCESSES * PER_PROCESS;
    // The lease outlasts the storm (on dynalite, a hundred claims on one key take seconds), so none takes over.
    const first = await storm(key, 60_000);
    expect(first.errors).toEqual([]);
    expect(first.kinds).toEqual({ acquired: 1, inProgress: total - 1 });
    const [owner] = first.winners;
    expect(owner).toMatchObject({ attempt: 1, takeover: false });

    // The owner stalls: its lease is cut to 1 ms, as if it had not renewed in time.
    expect(await transition(owner!.index, 'renew', key, owner!.token, '1')).toEqual({ kind: 'ok' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await storm(key, 60_000);
    expect(second.errors).toEqual([]);
    expect(second.kinds).toEqual({ acquired: 1, inProgress: total - 1 });
    const [taker] = second.winners;
    expect(taker).toMatchObject({ attempt: 2, takeover: true });
    expect(taker!.token).toBeGreaterThan(owner!.token);

    expect(await transition(owner!.index, 'complete', key, owner!.token, 'stale')).toEqual({
      kind: 'fenced',
    });
    expect(await transition(taker!.index, 'complete', key, taker!.token, `paid-by-${taker!.index}`)).toEqual({
      kind: 'ok',
    });

    const third = await storm(key, 60_000);
    expect(third.errors).toEqual([]);
    expect(third.kinds).toEqual({ replay: total });
    expect(third.bodies).toEqual([`paid-by-${taker!.index}`]);
  });

  it('many keys at once: one winner each', async () => {
    const keys = Array.from({ length: 3 }, () => randomUUID());
    const results = await Promise.all(keys.map((key) => storm(key, 60_000)));
    // Each storm's lines are read in order per process, so the storms above ran one after another per process.
    for (const result of results) {
      expect(result.errors).toEqual([]);
      expect(result.winners).toHaveLength(1);
    }
  });
});
