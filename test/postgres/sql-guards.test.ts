import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/core/store.js';
import beginSql from '../../src/stores/postgres/sql/begin.sql.generated.js';
import completeSql from '../../src/stores/postgres/sql/complete.sql.generated.js';
import completeInTransactionSql from '../../src/stores/postgres/sql/complete-in-transaction.sql.generated.js';
import deleteSql from '../../src/stores/postgres/sql/delete.sql.generated.js';
import getSql from '../../src/stores/postgres/sql/get.sql.generated.js';
import purgeSql from '../../src/stores/postgres/sql/purge.sql.generated.js';
import releaseSql from '../../src/stores/postgres/sql/release.sql.generated.js';
import renewSql from '../../src/stores/postgres/sql/renew.sql.generated.js';
import { breakGuard, firstFailure, type Guard, isWrongAnswer } from '../support/broken-guards.js';
import { requireService } from '../support/services.js';
import { createTestSchema, type TestSchema } from './support.js';

// Stryker cannot mutate SQL, so each guard of the store's statements is broken here by hand: the store is loaded
// with the statement's text changed (its embedded module replaced), and the conformance suite must fail on it, in
// plain and transactional mode: a wrong answer, or an error where an answer was due, never SQL that does not
// parse. A guard the suite lets through is a gap in the suite. The list, and the case that catches each:
// docs/mutation.md.
const SOURCES: Record<string, string> = {
  begin: beginSql,
  complete: completeSql,
  'complete-in-transaction': completeInTransactionSql,
  release: releaseSql,
  renew: renewSql,
  get: getSql,
  delete: deleteSql,
  purge: purgeSql,
};

// complete, release and renew are fenced by one WHERE clause each: every check of it is broken in each of them.
const FENCE = (asset: string): Guard[] => [
  {
    asset,
    name: 'fence: the caller holds the current token',
    find: 'AND k.token = $2::bigint ',
    replace: 'AND $2::bigint IS NOT NULL ',
  },
  {
    asset,
    name: 'fence: the record is in progress',
    find: "AND k.state = 'inProgress' ",
    replace: '',
  },
  {
    asset,
    name: 'fence: the record is not past its retention',
    find: "AND k.state = 'inProgress' AND k.expires_at_ms > c.now_ms",
    replace: "AND k.state = 'inProgress'",
  },
];

const SQL_GUARDS: readonly Guard[] = [
  ...FENCE('complete'),
  ...FENCE('release'),
  ...FENCE('renew'),
  {
    asset: 'begin',
    name: 'a completed record replays',
    find: "WHEN s.state = 'completed' THEN 'replay'",
    replace: "WHEN false THEN 'replay'",
  },
  {
    asset: 'complete',
    name: 'a completion keeps its own retention',
    find: 'expires_at_ms = c.now_ms + $8::bigint',
    replace: 'expires_at_ms = k.expires_at_ms + 0 * $8::bigint',
  },
  {
    asset: 'begin',
    name: 'a live lease is not taken over',
    find: 'AND k.lease_until_ms <= c.now_ms))',
    replace: '))',
  },
  {
    asset: 'begin',
    name: 'a takeover or a claim after a release keeps the label of the row it continues',
    find: 'label = CASE WHEN k.expires_at_ms <= c.now_ms THEN $6::text ELSE k.label END',
    replace: 'label = $6::text',
  },
  {
    asset: 'begin',
    name: 'a claim on a row past its end takes the label it is given',
    find: 'label = CASE WHEN k.expires_at_ms <= c.now_ms THEN $6::text ELSE k.label END',
    replace: 'label = k.label',
  },
  {
    asset: 'get',
    name: 'get reads the label',
    find: 'k.storage, k.label',
    replace: 'k.storage, NULL AS label',
  },
  {
    asset: 'begin',
    name: 'a takeover keeps the fingerprint',
    find: "(k.state = 'inProgress' AND k.fingerprint = $2 AND",
    replace: "(k.state = 'inProgress' AND",
  },
  {
    asset: 'begin',
    name: 'another fingerprint is a mismatch',
    find: "WHEN s.fingerprint <> $2 THEN 'mismatch'",
    replace: "WHEN false THEN 'mismatch'",
  },
  {
    asset: 'begin',
    name: 'a record past its retention is claimed afresh',
    find: '(k.expires_at_ms <= c.now_ms\n      OR',
    replace: '(false\n      OR',
  },
  {
    asset: 'begin',
    name: 'a claim raises the token above the previous one',
    find: 'token = greatest(k.token + 1, c.now_ms)',
    replace: 'token = c.now_ms',
  },
  {
    asset: 'begin',
    name: 'a claim after expiry counts attempts from 1',
    find: 'attempt = CASE WHEN k.expires_at_ms <= c.now_ms THEN 1 ELSE k.attempt + 1 END',
    replace: 'attempt = k.attempt + 1',
  },
  {
    asset: 'begin',
    name: 'only a lease that ran out is a takeover',
    find: "taken_over = (k.state = 'inProgress' AND k.expires_at_ms > c.now_ms)",
    replace: 'taken_over = false',
  },
  {
    asset: 'delete',
    name: "a delete in the token's millisecond leaves a tombstone",
    find: 'WHERE k.key = v.key AND v.token < c.now_ms',
    replace: 'WHERE k.key = v.key',
    also: [['WHERE k.key = v.key AND v.token >= c.now_ms', 'WHERE false']],
  },
  {
    asset: 'delete',
    name: 'a delete reports whether a live record was there',
    find: '(d.expires_at_ms > c.now_ms) AS existed',
    replace: 'true AS existed',
  },
  {
    asset: 'get',
    name: 'a record past its retention is not returned',
    find: 'WHERE k.key = $1 AND k.expires_at_ms > c.now_ms',
    replace: 'WHERE k.key = $1',
  },
  {
    asset: 'purge',
    name: 'a tombstone stays until the clock passes its token',
    find: 'AND k.token < c.now_ms',
    replace: '',
  },
];

let db: TestSchema;
beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('guards', 4);
});
afterAll(async () => {
  vi.doUnmock('../../src/stores/postgres/sql/begin.sql.generated.js');
  await db?.drop();
});

const ASSET_MODULES: Record<string, string> = {
  begin: '../../src/stores/postgres/sql/begin.sql.generated.js',
  complete: '../../src/stores/postgres/sql/complete.sql.generated.js',
  'complete-in-transaction': '../../src/stores/postgres/sql/complete-in-transaction.sql.generated.js',
  release: '../../src/stores/postgres/sql/release.sql.generated.js',
  renew: '../../src/stores/postgres/sql/renew.sql.generated.js',
  get: '../../src/stores/postgres/sql/get.sql.generated.js',
  delete: '../../src/stores/postgres/sql/delete.sql.generated.js',
  purge: '../../src/stores/postgres/sql/purge.sql.generated.js',
};

/** The store's module loaded afresh, with `sql` in place of the asset's statement when given. */
async function storeModule(broken?: { asset: string; sql: string }) {
  vi.resetModules();
  for (const path of Object.values(ASSET_MODULES)) vi.doUnmock(path);
  if (broken) vi.doMock(ASSET_MODULES[broken.asset]!, () => ({ default: broken.sql }));
  return import('../../src/stores/postgres/index.js');
}

/** The conformance suite, plain and in transactional mode, against a store built from `module`. */
async function conformance(module: Awaited<ReturnType<typeof storeModule>>) {
  const plain = await firstFailure({
    createStore: ({ clock }) => new module.PostgresStore({ pool: db.pool, schema: db.schema, clock }),
    stormSize: 100,
    propertyRuns: 40,
  });
  if (plain !== undefined) return plain;
  return firstFailure({
    createStore: ({ clock }) =>
      new module.PostgresStore({ pool: db.pool, schema: db.schema, clock }).transactional(),
    destroyStore: async (store: Store) => (store as unknown as { base: Store }).base.close?.(),
    stormSize: 50,
    propertyRuns: 20,
  });
}

describe('SQL guards: the conformance suite fails when one is broken', () => {
  it('passes on the statements as they are (the control)', async () => {
    expect(await conformance(await storeModule())).toBeUndefined();
  });

  for (const guard of SQL_GUARDS) {
    it(`${guard.asset}.sql: ${guard.name}`, async () => {
      const sql = breakGuard(SOURCES[guard.asset]!, guard);
      const caught = await conformance(await storeModule({ asset: guard.asset, sql }));
      expect(caught, 'the conformance suite passed with this guard broken').toBeDefined();
      expect(isWrongAnswer(caught!.error), `${caught!.test}: ${String(caught!.error)}`).toBe(true);
    });
  }
});

// The outcome of a transactional claim is written only while the claim's transaction is still the one it was
// claimed in: the guard against the escapes PostgreSQL does not report (issue 23). The conformance suite never
// escapes, so a handler that does is what must fail here: `COMMIT AND CHAIN`, then a kept result.
const ESCAPE_GUARDS: readonly Guard[] = [
  {
    asset: 'complete-in-transaction',
    name: 'the outcome is written only in the claim’s own transaction',
    find: 'coalesce(pg_current_xact_id_if_assigned() = $10::xid8, false)',
    replace: 'coalesce($10::xid8 IS NOT NULL, false)',
  },
  {
    asset: 'complete-in-transaction',
    name: 'the statement says when it wrote nothing for an escape',
    find: 'SELECT h.ours AS held',
    replace: 'SELECT true AS held',
  },
];

/** Undefined when a handler that commits its transaction itself is refused; what happened instead otherwise. */
async function escapeRefused(module: Awaited<ReturnType<typeof storeModule>>): Promise<string | undefined> {
  const { idempotent, isTransactionEscapedError } = await import('../../src/index.js');
  const store = new module.PostgresStore({ pool: db.pool, schema: db.schema });
  const pay = idempotent(
    async (id: string, context) => {
      await module.transactionOf(context).query('COMMIT AND CHAIN');
      return id;
    },
    { store: store.transactional(), scope: 'escape-guard', key: (id) => id },
  );
  try {
    const id = `escape-${Math.random().toString(36).slice(2)}`;
    const answered = await pay(id).then(
      (value) => `returned ${value}`,
      (error: unknown) => (isTransactionEscapedError(error) ? undefined : String(error)),
    );
    return answered;
  } finally {
    await store.close();
  }
}

describe('SQL guards of transactional mode: a handler that escapes is no longer refused when one is broken', () => {
  it('refused on the statements as they are (the control)', async () => {
    expect(await escapeRefused(await storeModule())).toBeUndefined();
  });

  for (const guard of ESCAPE_GUARDS) {
    it(`${guard.asset}.sql: ${guard.name}`, async () => {
      const sql = breakGuard(SOURCES[guard.asset]!, guard);
      const missed = await escapeRefused(await storeModule({ asset: guard.asset, sql }));
      expect(missed, 'the escape was refused with this guard broken').toBeDefined();
    });
  }
});
