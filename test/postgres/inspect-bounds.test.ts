/**
 * Test (PostgreSQL inspector): a survey reads at most `scanLimit` rows (plus one, to tell truncation), down the
 * expiry index, never the whole table: EXPLAIN ANALYZE of both survey statements on a table of 3,000 rows, and a
 * record's view that returns no body bytes unless asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { statementsFor, tableTarget } from '../../src/stores/postgres/sql.js';
import { requireService } from '../support/services.js';
import { createTestSchema, type TestSchema } from './support.js';

const ROWS = 3_000;
const SCAN_LIMIT = 50;
let db: TestSchema;

beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('inspect');
  const table = db.table('oncely_keys');
  await db.pool.query(
    `INSERT INTO ${table} (key, state, fingerprint, token, attempt, lease_until_ms, created_at_ms, expires_at_ms)
     SELECT 'k' || i, 'inProgress', 'f', i, 1, 9e12, 1, 9e12 + i FROM generate_series(1, ${ROWS}) i`,
  );
  await db.pool.query(`ANALYZE ${table}`);
});
afterAll(async () => db?.drop());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

async function plan(text: string, values: unknown[]): Promise<PlanNode[]> {
  const { rows } = await db.pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
  return nodes((rows[0]['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
}

describe('PostgresStore inspector bounds', () => {
  const statements = () => statementsFor(tableTarget(db.schema, 'oncely_keys'), { notify: false });

  it('both survey statements read at most scanLimit + 1 rows of the table, by index, never a sequential scan', async () => {
    const { surveyCounts, surveyLists } = statements();
    for (const [text, values] of [
      [surveyCounts, [null, SCAN_LIMIT, null, null, null]],
      [surveyLists, [null, SCAN_LIMIT, 10, null, null, null, 'inProgress,completed,released']],
    ] as const) {
      const scans = (await plan(text, [...values])).filter((node) => node['Relation Name'] === 'oncely_keys');
      expect(scans.length).toBeGreaterThan(0);
      for (const scan of scans) {
        expect(scan['Node Type']).toMatch(/Index/);
        expect(scan['Actual Rows'] * scan['Actual Loops']).toBeLessThanOrEqual(SCAN_LIMIT + 1);
      }
    }
  });

  it('reports the walk: truncated, scanned = scanLimit, the counts of the rows it read', async () => {
    const store = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false });
    const survey = await store.inspector.survey({ limit: 5, scanLimit: SCAN_LIMIT });
    expect(survey).toMatchObject({ truncated: true, scanned: SCAN_LIMIT });
    expect(survey.counts.inProgress).toBe(SCAN_LIMIT);
    // Newest expiry first: the walk reads the end of the index.
    expect(survey.lists.inProgress).toHaveLength(5);
    const whole = await store.inspector.survey({ limit: 5, scanLimit: ROWS });
    expect(whole).toMatchObject({ truncated: false, scanned: ROWS, counts: { records: ROWS } });
  });

  it('a record view sends the body only when asked', async () => {
    const { inspectRecord } = statements();
    const table = db.table('oncely_keys');
    await db.pool.query(
      `UPDATE ${table} SET state = 'completed', completed_at_ms = 2, status = 200, headers = '[]', encoding = 'identity',
         storage = 'inline', body = '\\x68656c6c6f' WHERE key = 'k1'`,
    );
    const without = await db.pool.query(inspectRecord, ['k1', null, false]);
    expect(Buffer.from(without.rows[0].body).length).toBe(0);
    expect(Number(without.rows[0].body_bytes)).toBe(5);
    const store = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false });
    expect((await store.inspector.record('k1'))?.outcome).toMatchObject({ bodyBytes: 5 });
    const asked = await store.inspector.record('k1', { body: true });
    expect(Buffer.from(asked?.outcome?.body ?? []).toString()).toBe('hello');
  });
});
