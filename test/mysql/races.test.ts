import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreUnavailableError } from '../../src/index.js';
import { type MySqlPool, MySqlStore } from '../../src/stores/mysql/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { requireService } from '../support/services.js';
import { createPool, createTestTable, DRIVERS, query, type TestTable } from './support.js';

const begin = { fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 };
const key = (name: string) => `races:${Math.random().toString(36).slice(2)}:${name}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts the statements the store sends through the pool (both drivers' `query`), by wrapping it. */
function counting(pool: MySqlPool): { calls: () => number } {
  let calls = 0;
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    calls++;
    return original(...args);
  };
  return { calls: () => calls };
}

/** A pool whose row lock waits give up after one second (the smallest `innodb_lock_wait_timeout`). */
const impatientPool = (driver: (typeof DRIVERS)[number]) => createPool(driver, { size: 2, lockWaitS: 1 });

beforeAll(() => requireService('mariadb'));

describe.each(DRIVERS)(
  'MySqlStore on %s: lost lock races run again, a lock held for good is an outage',
  (driver) => {
    let db: TestTable;
    let holder: MySqlPool;
    beforeAll(async () => {
      db = await createTestTable('races', driver, { size: 4 });
      holder = createPool('mysql2', { size: 1 });
      await query(holder, 'CREATE TABLE IF NOT EXISTS oncely_test_ballast (id INT PRIMARY KEY, v INT)');
    });
    afterAll(async () => {
      if (holder !== undefined) await query(holder, 'DROP TABLE IF EXISTS oncely_test_ballast');
      await holder?.end();
      await db?.drop();
    });

    it('a statement whose row lock wait ran out (1205) runs again, and succeeds once the lock is free', async () => {
      const store = new MySqlStore({ pool: db.pool, table: db.table });
      const k = key('wait');
      const claim = await store.begin({ ...begin, key: k });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      const pool = impatientPool(driver);
      const connection = await (holder as import('mysql2/promise').Pool).getConnection();
      try {
        await connection.query('START TRANSACTION');
        await connection.query(`SELECT * FROM \`${db.table}\` WHERE \`key\` = ? FOR UPDATE`, [
          Buffer.from(k),
        ]);
        const waiting = new MySqlStore({ pool, table: db.table });
        const counted = counting(pool);
        const started = Date.now();
        const renewed = waiting.renew({ key: k, token: claim.token, leaseMs: 20_000 });
        await sleep(1_500);
        await connection.query('COMMIT');
        expect(await renewed).toEqual({ kind: 'ok' });
        expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
        // The renew twice: the first ran out of lock wait.
        expect(counted.calls()).toBe(2);
      } finally {
        connection.release();
        await pool.end();
      }
    });

    it('a row lock held past every retry fails closed with StoreUnavailableError (cause: error 1205)', async () => {
      const store = new MySqlStore({ pool: db.pool, table: db.table });
      const k = key('held');
      const claim = await store.begin({ ...begin, key: k });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      const pool = impatientPool(driver);
      const connection = await (holder as import('mysql2/promise').Pool).getConnection();
      try {
        await connection.query('START TRANSACTION');
        await connection.query(`SELECT * FROM \`${db.table}\` WHERE \`key\` = ? FOR UPDATE`, [
          Buffer.from(k),
        ]);
        const waiting = new MySqlStore({ pool, table: db.table });
        const error = await waiting
          .renew({ key: k, token: claim.token, leaseMs: 20_000 })
          .catch((caught) => caught);
        expect(isStoreUnavailableError(error)).toBe(true);
        expect((error as { cause?: { errno?: number } }).cause?.errno).toBe(1205);
      } finally {
        await connection.query('ROLLBACK');
        connection.release();
        await pool.end();
      }
    }, 20_000);

    it('a statement chosen as a deadlock victim (1213) runs again, and its work is done', async () => {
      const clock = new FakeClock();
      const store = new MySqlStore({ pool: db.pool, table: db.table, clock: clock.now });
      // Two rows that expire one after the other, in key order too, so purge locks a before b whatever plan it takes.
      const prefix = key('deadlock');
      const [a, b] = [`${prefix}:a`, `${prefix}:b`];
      await store.begin({ ...begin, key: a, retentionMs: 1_000 });
      clock.advance(10);
      await store.begin({ ...begin, key: b, retentionMs: 1_000 });
      clock.advance(60_000);
      const counted = counting(db.pool);
      const connection = await (holder as import('mysql2/promise').Pool).getConnection();
      try {
        await connection.query('START TRANSACTION');
        // Weight: InnoDB rolls back the transaction that changed fewer rows, so the purge is the victim.
        await connection.query(
          'INSERT INTO oncely_test_ballast (id, v) SELECT seq, 0 FROM seq_1_to_500 ON DUPLICATE KEY UPDATE v = v + 1',
        );
        await connection.query(`SELECT * FROM \`${db.table}\` WHERE \`key\` = ? FOR UPDATE`, [
          Buffer.from(b),
        ]);
        const purged = store.purgeExpired();
        await sleep(300);
        // The purge holds a and waits for b; asking for a now closes the cycle.
        await connection.query(`SELECT * FROM \`${db.table}\` WHERE \`key\` = ? FOR UPDATE`, [
          Buffer.from(a),
        ]);
        await connection.query('COMMIT');
        expect(await purged).toBeGreaterThanOrEqual(2);
        // One batch found both rows (fewer than a batch): the second call is the victim's retry.
        expect(counted.calls()).toBe(2);
        expect(await store.get(a)).toBeUndefined();
      } finally {
        connection.release();
      }
    });
  },
);
