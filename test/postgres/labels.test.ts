/**
 * @module Record labels in PostgreSQL, where the contract suite cannot see: the `label` column `migrate()` adds to
 * a table made before labels, what the store does until it is added (refuses, saying to migrate), the claim of
 * transactional mode (prepared or not), and a bad label refused before it reaches the column.
 */
import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { scopedKey } from '../../src/core/key.js';
import { idempotent, isInvalidOptionsError, isStoreUnavailableError } from '../../src/index.js';
import { migrate, PostgresStore } from '../../src/stores/postgres/index.js';
import { requireService } from '../support/services.js';
import { createTestSchema, type TestSchema } from './support.js';

let db: TestSchema;
beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('labels');
});
afterAll(async () => db?.drop());

const lease = { leaseMs: 10_000, retentionMs: 60_000 };
const key = (name: string) => scopedKey('labels-test', `${name}-${Math.random()}`);

const hasLabelColumn = async (schema: string) =>
  (
    await db.pool.query(
      `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'oncely_keys' AND column_name = 'label'`,
      [schema],
    )
  ).rowCount === 1;

describe('PostgresStore labels', () => {
  it('a table made before labels: begin refuses with a typed error that says to migrate; migrate() adds the column', async () => {
    const schema = `${db.schema}_old`;
    await migrate(db.pool, { schema });
    // The table as a version before labels made it.
    await db.pool.query(`ALTER TABLE "${schema}".oncely_keys DROP COLUMN label`);
    await db.pool.query(
      `INSERT INTO "${schema}".oncely_keys (key, state, fingerprint, token, attempt, lease_until_ms, created_at_ms, expires_at_ms)
       VALUES ('old-row', 'released', 'f', 1, 1, 1, 1, 9007199254740991)`,
    );
    const store = new PostgresStore({ pool: db.pool, schema });
    try {
      const error = await store.begin({ key: key('a'), fingerprint: 'f', ...lease, label: 'POST /a' }).then(
        () => assert.fail('begin worked on a table without the label column'),
        (e: unknown) => e,
      );
      assert.ok(isStoreUnavailableError(error), String(error));
      assert.match(String((error as Error).message), /label.*oncely migrate/s);
      await store.migrate();
      assert.ok(await hasLabelColumn(schema));
      await store.migrate(); // idempotent
      const old = await store.get('old-row');
      assert.equal(old?.state, 'released');
      assert.equal(old?.label, undefined, 'rows of before labels have none');
      const k = key('b');
      assert.equal(
        (await store.begin({ key: k, fingerprint: 'f', ...lease, label: 'POST /a' })).kind,
        'acquired',
      );
      assert.equal((await store.get(k))?.label, 'POST /a');
    } finally {
      await db.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });

  for (const prepare of [true, false]) {
    it(`transactional mode (prepare: ${prepare}) keeps the label of its claim`, async () => {
      const store = new PostgresStore({ pool: db.pool, schema: db.schema, prepare });
      async function settle(id: string) {
        return { settled: id };
      }
      const run = idempotent(settle, { store: store.transactional(), key: (id) => id });
      await run('p-1');
      await run('p-1');
      const record = await store.get(scopedKey('fn:settle', 'p-1'));
      assert.equal(record?.state, 'completed');
      assert.equal(record?.label, 'fn:settle');
      await store.delete(scopedKey('fn:settle', 'p-1'));
    });
  }

  it('a label with a control character, or longer than 200 characters, is refused before it is written', async () => {
    const store = new PostgresStore({ pool: db.pool, schema: db.schema });
    const k = key('bad');
    for (const label of ['POST /a\u0000', 'x'.repeat(201), 'a\nb']) {
      await assert.rejects(store.begin({ key: k, fingerprint: 'f', ...lease, label }), isInvalidOptionsError);
      await assert.rejects(
        store.transactional().beginTransaction({ key: k, fingerprint: 'f', ...lease, label, waitMs: 0 }),
        isInvalidOptionsError,
      );
    }
    assert.equal(await store.get(k), undefined, 'nothing was written');
  });
});
