import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayProcesses } from '../postgres/workers/processes.js';
import { requireService } from '../support/services.js';
import { createTestTable, type DriverName, type Isolation, type TestTable } from './support.js';

// 4 processes, each with its own pool, fire 3 begins per key at once on 30 shared keys (360 concurrent begins a
// storm), three storms in a row: on new keys (the winners then release), on released keys (the winners complete),
// on completed keys. Each storm has exactly one winner per key, the second with a higher token than the first,
// and the third replays the second winner's bytes everywhere.
const PROCESSES = 4;
const CONTENDERS = 3;
const KEYS = 30;
const worker = new URL('./workers/storm.ts', import.meta.url).pathname;

interface Result {
  readonly key: string;
  readonly worker: number;
  readonly kind: string;
  readonly token?: number;
  readonly attempt?: number;
  readonly body?: string;
  readonly error?: string;
}

const runs: readonly [DriverName, Isolation][] = [
  ['mysql2', 'REPEATABLE READ'],
  ['mariadb', 'READ COMMITTED'],
];

beforeAll(() => requireService('mariadb'));

describe.each(runs)('storm across processes on %s, %s', (driver, isolation) => {
  let db: TestTable;
  let workers: PayProcesses;
  const keys = Array.from({ length: KEYS }, (_, i) => `storm:${driver}:${Date.now()}:${i}`);

  beforeAll(async () => {
    db = await createTestTable('storm', driver, { size: 2 });
    const config = { driver, isolation, table: db.table, keys, contenders: CONTENDERS };
    workers = new PayProcesses(PROCESSES, config, worker);
    expect(await workers.read()).toEqual(Array(PROCESSES).fill('ready'));
  });
  afterAll(async () => {
    await workers?.stop();
    await db?.drop();
  });

  async function storm(settle: 'release' | 'complete' | undefined): Promise<Result[]> {
    workers.send('begin');
    const results = (await workers.read()).flatMap((line) => JSON.parse(line) as Result[]);
    if (settle !== undefined) {
      workers.send(`settle ${settle}`);
      expect(await workers.read()).toEqual(Array(PROCESSES).fill('settled'));
    }
    return results;
  }

  const winners = (results: Result[]) => {
    const byKey = new Map<string, Result[]>();
    for (const result of results.filter((r) => r.kind === 'acquired')) {
      byKey.set(result.key, [...(byKey.get(result.key) ?? []), result]);
    }
    return byKey;
  };

  it('one winner per key in every storm, tokens rising across the release, every replay the same bytes', async () => {
    const first = await storm('release');
    expect(first.filter((r) => r.kind === 'error')).toEqual([]);
    expect(first).toHaveLength(PROCESSES * CONTENDERS * KEYS);
    const firstWinners = winners(first);
    for (const key of keys) expect(firstWinners.get(key), key).toHaveLength(1);
    expect(first.filter((r) => r.kind !== 'acquired').every((r) => r.kind === 'inProgress')).toBe(true);

    const second = await storm('complete');
    expect(second.filter((r) => r.kind === 'error')).toEqual([]);
    const secondWinners = winners(second);
    for (const key of keys) {
      const [won] = secondWinners.get(key) ?? [];
      expect(secondWinners.get(key), key).toHaveLength(1);
      expect(won!.token!).toBeGreaterThan(firstWinners.get(key)![0]!.token!);
      expect(won!.attempt).toBe(2);
    }

    const third = await storm(undefined);
    expect(third.every((r) => r.kind === 'replay')).toBe(true);
    expect(new Set(third.map((r) => r.worker)).size).toBe(PROCESSES);
    for (const key of keys) {
      const bodies = new Set(third.filter((r) => r.key === key).map((r) => r.body));
      expect([...bodies], key).toEqual([`worker ${secondWinners.get(key)![0]!.worker} for ${key}`]);
    }
  });
});
