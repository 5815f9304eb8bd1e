import { afterAll, beforeAll } from 'vitest';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { runEncryptionAtRest } from '../support/encryption-suite.js';
import { requireService } from '../support/services.js';
import { createTestSchema, type TestSchema } from './support.js';

// A schema of this file's own. The value at rest is the record's row, every column as the server returns it; copying
// and tampering are plain SQL on the table, as anyone with write access to it could run.
let db: TestSchema;

beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('encryption');
});

afterAll(async () => {
  await db?.drop();
});

const COLUMNS =
  'state, fingerprint, token, attempt, taken_over, lease_until_ms, created_at_ms, completed_at_ms, expires_at_ms, status, headers, body, encoding, storage';

for (const transactional of [false, true]) {
  runEncryptionAtRest<PostgresStore>({
    name: transactional ? 'PostgresStore, transactional mode' : 'PostgresStore',
    store: () => new PostgresStore({ pool: db.pool, schema: db.schema }),
    // Transactional mode stores the outcome through the open transaction's commit, not through complete.
    ...(transactional ? { engineOptions: (store: PostgresStore) => ({ store: store.transactional() }) } : {}),
    raw: async (_store, key) => {
      const { rows } = await db.pool.query(
        `SELECT ${COLUMNS} FROM ${db.table('oncely_keys')} WHERE key = $1`,
        [key],
      );
      const row = rows[0] as Record<string, unknown> | undefined;
      if (row === undefined) throw new Error(`no row for ${key}`);
      return Buffer.concat(
        Object.values(row).map((cell) =>
          Buffer.isBuffer(cell) ? cell : Buffer.from(typeof cell === 'string' ? cell : JSON.stringify(cell)),
        ),
      );
    },
    copy: async (_store, from, to) => {
      await db.pool.query(
        `INSERT INTO ${db.table('oncely_keys')} (key, ${COLUMNS}) SELECT $2, ${COLUMNS} FROM ${db.table('oncely_keys')} WHERE key = $1`,
        [from, to],
      );
    },
    tamper: async (_store, key) => {
      await db.pool.query(
        `UPDATE ${db.table('oncely_keys')} SET body = set_byte(body, length(body) - 20, get_byte(body, length(body) - 20) # 1) WHERE key = $1`,
        [key],
      );
    },
  });
}
