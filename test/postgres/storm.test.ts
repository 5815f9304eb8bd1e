import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireService } from '../support/services.js';
import { createTestSchema, DATABASE_URL, type TestSchema } from './support.js';
import { PayProcesses } from './workers/processes.js';

// 2,000 concurrent identical payment requests from 4 Node processes (500 each, 5 connections each), in
// transactional mode: exactly one business row, every other request replays the same result (or, without a
// wait, is told the key is in progress). The handler holds its transaction open for 200 ms, so duplicates from
// every process arrive while it is uncommitted.
const PROCESSES = 4;
const PER_PROCESS = 500;

let db: TestSchema;
let workers: PayProcesses;
let payments: string;

beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('storm', 2);
  payments = db.table('payments');
  await db.pool.query(
    `CREATE TABLE ${payments} (serial serial, id text NOT NULL, cents integer, worker integer)`,
  );
  workers = new PayProcesses(PROCESSES, { url: DATABASE_URL, schema: db.schema, payments, poolSize: 5 });
  expect(await workers.read()).toEqual(Array(PROCESSES).fill('ready'));
});
afterAll(async () => {
  await workers?.stop();
  await db?.drop();
});

interface Report {
  kinds: Record<string, number>;
  values: string[];
  errors: string[];
}

async function storm(key: string, waitMs: number) {
  workers.send(`storm ${key} ${PER_PROCESS} ${waitMs}`);
  const reports = (await workers.read()).map((line) => JSON.parse(line) as Report);
  const kinds: Record<string, number> = {};
  for (const r of reports) for (const [k, n] of Object.entries(r.kinds)) kinds[k] = (kinds[k] ?? 0) + n;
  const rows = await db.pool.query(`SELECT serial FROM ${payments} WHERE id = $1`, [key]);
  return {
    kinds,
    values: [...new Set(reports.flatMap((r) => r.values))],
    errors: reports.flatMap((r) => r.errors),
    rows: rows.rows,
  };
}

describe('storm across processes, transactional mode', () => {
  it(`${PROCESSES * PER_PROCESS} requests that wait: one business row, one execution, all others replay it`, async () => {
    const result = await storm('order-wait', 30_000);
    expect(result.errors).toEqual([]);
    expect(result.kinds).toEqual({ executed: 1, replayed: PROCESSES * PER_PROCESS - 1 });
    expect(result.rows).toHaveLength(1);
    expect(result.values).toHaveLength(1);
    expect(JSON.parse(result.values[0]!).payment).toBe(result.rows[0].serial);
  });

  it(`${PROCESSES * PER_PROCESS} requests that do not wait: one business row; the rest replay or are told in progress`, async () => {
    const result = await storm('order-nowait', 0);
    expect(result.errors).toEqual([]);
    expect(result.kinds.executed).toBe(1);
    expect((result.kinds.replayed ?? 0) + (result.kinds.inProgress ?? 0)).toBe(PROCESSES * PER_PROCESS - 1);
    expect(result.rows).toHaveLength(1);
    expect(result.values).toHaveLength(1);
  });
});
