import * as mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, isInvalidKeyError, isStoreUnavailableError } from '../../src/index.js';
import type { StoredOutcome } from '../../src/store.js';
import { type MySqlPool, MySqlStore, migrate, schemaFor } from '../../src/stores/mysql/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { freePort } from '../support/free-port.js';
import { requireService } from '../support/services.js';
import {
  createPool,
  createTestTable,
  DRIVERS,
  dropTable,
  query,
  type TestTable,
  uniqueTable,
} from './support.js';

const begin = { fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 };
const everyByte = new Uint8Array(256).map((_, i) => i);
const outcome = (body: Uint8Array): StoredOutcome => ({
  status: 200,
  headers: [['x-quote', `it's "quoted" \\ and ünïcode 😀`]],
  body,
  encoding: 'identity',
  storage: 'inline',
});
const key = () => `store:${Math.random().toString(36).slice(2)}`;

beforeAll(() => requireService('mariadb'));

describe.each(DRIVERS)('MySqlStore on %s', (driver) => {
  let db: TestTable;
  beforeAll(async () => {
    db = await createTestTable('store', driver, { size: 4 });
  });
  afterAll(async () => db?.drop());

  it('replays the stored outcome byte for byte: every byte value, headers and label in UTF-8', async () => {
    const store = new MySqlStore({ pool: db.pool, table: db.table });
    const k = key();
    const claim = await store.begin({ ...begin, key: k, label: 'POST /pâyments/:id 😀' });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    expect(
      await store.complete({ key: k, token: claim.token, outcome: outcome(everyByte), retentionMs: 60_000 }),
    ).toEqual({
      kind: 'ok',
    });
    const replay = await store.begin({ ...begin, key: k });
    if (replay.kind !== 'replay') throw new Error(replay.kind);
    expect(Buffer.from(replay.outcome.body).equals(Buffer.from(everyByte))).toBe(true);
    expect(replay.outcome.headers).toEqual(outcome(everyByte).headers);
    expect((await store.get(k))?.label).toBe('POST /pâyments/:id 😀');
    const view = await store.inspector.record(k, { body: true });
    expect(view?.outcome?.bodyBytes).toBe(256);
    expect(Buffer.from(view?.outcome?.body ?? []).equals(Buffer.from(everyByte))).toBe(true);
  });

  it('keys are compared byte for byte: case, trailing spaces and accents are other keys', async () => {
    const store = new MySqlStore({ pool: db.pool, table: db.table });
    const base = key();
    for (const k of [`${base}a`, `${base}A`, `${base}a `, `${base}á`]) {
      expect((await store.begin({ ...begin, key: k })).kind).toBe('acquired');
    }
  });

  it('takes one round trip per transition: begin (new key or replay), complete, release, renew, get, delete', async () => {
    // One connection, so the server's own count of the statements it was sent (Questions, which leaves out the
    // statements a procedure runs) belongs to this store alone.
    const pool = createPool(driver, { size: 1 });
    try {
      const store = new MySqlStore({ pool, table: db.table });
      const questions = async () =>
        Number((await query(pool, "SHOW SESSION STATUS LIKE 'Questions'"))[0]?.Value ?? Number.NaN);
      const counted = async (run: () => Promise<unknown>) => {
        const before = await questions();
        await run();
        // The SHOW that reads the count is a statement too.
        return (await questions()) - before - 1;
      };
      const k = key();
      let token = 0;
      expect(
        await counted(async () => {
          const claim = await store.begin({ ...begin, key: k });
          if (claim.kind === 'acquired') token = claim.token;
        }),
      ).toBe(1);
      expect(await counted(() => store.renew({ key: k, token, leaseMs: 5_000 }))).toBe(1);
      expect(
        await counted(() =>
          store.complete({ key: k, token, outcome: outcome(everyByte), retentionMs: 1_000 }),
        ),
      ).toBe(1);
      expect(await counted(() => store.begin({ ...begin, key: k }))).toBe(1);
      expect(await counted(() => store.get(k))).toBe(1);
      expect(await counted(() => store.delete(k))).toBe(1);
      const other = key();
      const claim = await store.begin({ ...begin, key: other });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      expect(await counted(() => store.release({ key: other, token: claim.token }))).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('a renewal to the same deadline counts as renewed without the found-rows flag', async () => {
    // Without CLIENT_FOUND_ROWS the server reports changed rows, not matched ones: a renewal within the same
    // millisecond changes lease_until_ms to what it was, and only `renewals` tells it apart from a fenced one.
    const url = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
    const config = {
      host: url.hostname,
      port: Number(url.port || 3306),
      user: url.username || 'root',
      database: 'test',
    };
    const pool: MySqlPool =
      driver === 'mariadb'
        ? mariadb.createPool({ ...config, connectionLimit: 1, foundRows: false })
        : mysql.createPool({ ...config, connectionLimit: 1, flags: ['-FOUND_ROWS'] });
    try {
      const clock = new FakeClock();
      const store = new MySqlStore({ pool, table: db.table, clock: clock.now });
      const k = key();
      const claim = await store.begin({ ...begin, key: k });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      expect(await store.renew({ key: k, token: claim.token, leaseMs: 10_000 })).toEqual({ kind: 'ok' });
      expect(await store.renew({ key: k, token: claim.token, leaseMs: 10_000 })).toEqual({ kind: 'ok' });
      expect(await store.renew({ key: k, token: claim.token + 1, leaseMs: 10_000 })).toEqual({
        kind: 'fenced',
      });
    } finally {
      await pool.end();
    }
  });

  it('refuses keys, fingerprints and labels that its columns cannot hold as they are, with typed errors', async () => {
    const store = new MySqlStore({ pool: db.pool, table: db.table });
    const tooLong = await store.begin({ ...begin, key: 'k'.repeat(513) }).catch((error: unknown) => error);
    expect(isInvalidKeyError(tooLong)).toBe(true);
    const lone = await store.begin({ ...begin, key: 'k\ud800' }).catch((error: unknown) => error);
    expect(isInvalidKeyError(lone)).toBe(true);
    await expect(store.begin({ ...begin, key: key(), fingerprint: 'f'.repeat(1025) })).rejects.toBeInstanceOf(
      InvalidOptionsError,
    );
    await expect(store.begin({ ...begin, key: key(), label: 'a\nb' })).rejects.toBeInstanceOf(
      InvalidOptionsError,
    );
    expect((await store.begin({ ...begin, key: 'k'.repeat(512) })).kind).not.toBe(undefined);
  });

  it('runs its connections at the isolation level the pool sets', async () => {
    for (const isolation of ['READ COMMITTED', 'REPEATABLE READ'] as const) {
      const pool = createPool(driver, { isolation, size: 1 });
      try {
        const [row] = await query(pool, 'SELECT @@SESSION.tx_isolation AS level');
        expect(row?.level).toBe(isolation.replace(' ', '-'));
      } finally {
        await pool.end();
      }
    }
  });

  it('names the missing table and says to migrate', async () => {
    const store = new MySqlStore({ pool: db.pool, table: 'oncely_never_migrated' });
    const error = await store.begin({ ...begin, key: key() }).catch((caught: unknown) => caught);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as Error).message).toMatch(/oncely_never_migrated.*migrate/s);
    const got = await store.get(key()).catch((caught: unknown) => caught);
    expect((got as Error).message).toMatch(
      /^mysql get failed \(error 1146: Table '.*oncely_never_migrated' doesn't exist\); the table oncely_never_migrated .*migrate/,
    );
  });

  it('fails closed with StoreUnavailableError, the driver error as cause, when the server is unreachable', async () => {
    const port = await freePort();
    const config = { host: '127.0.0.1', port, user: 'root', database: 'test', connectTimeout: 2_000 };
    const pool: MySqlPool =
      driver === 'mariadb'
        ? mariadb.createPool({ ...config, connectionLimit: 1, acquireTimeout: 2_000 })
        : mysql.createPool({ ...config, connectionLimit: 1 });
    try {
      const store = new MySqlStore({ pool, table: db.table });
      const error = await store.begin({ ...begin, key: key() }).catch((caught: unknown) => caught);
      expect(isStoreUnavailableError(error)).toBe(true);
      expect((error as Error).cause).toBeInstanceOf(Error);
    } finally {
      await pool.end().catch(() => {});
    }
  });

  it('fails closed with StoreUnavailableError on a pool the caller ended', async () => {
    const pool = createPool(driver, { size: 1 });
    await pool.end();
    const store = new MySqlStore({ pool, table: db.table });
    const error = await store.get(key()).catch((caught: unknown) => caught);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it('tells telemetry the system, and what the pool was configured with', () => {
    const store = new MySqlStore({ pool: db.pool, table: db.table });
    if (driver === 'mariadb') expect(store.endpoint).toEqual({ system: 'mariadb', collection: db.table });
    else
      expect(store.endpoint).toEqual({
        system: 'mysql',
        address: '127.0.0.1',
        port: 3306,
        namespace: 'test',
        collection: `test.${db.table}`,
      });
  });
});

describe('MySqlStore options and migrate', () => {
  let pool: MySqlPool;
  beforeAll(() => {
    pool = createPool('mysql2', { size: 2 });
  });
  afterAll(() => pool?.end());

  it('validates its options at construction', () => {
    const callbackPool = { query() {}, getConnection() {}, promise() {} };
    const bad: unknown[] = [
      undefined,
      {},
      { pool: {} },
      { pool: callbackPool },
      { pool, table: '' },
      { pool, table: 'x'.repeat(65) },
      { pool, table: 'ends with space ' },
      { pool, clock: 1 },
      { pool, schema: 'x' },
    ];
    for (const options of bad) {
      expect(() => new MySqlStore(options as never), `options ${bad.indexOf(options)}`).toThrow(
        InvalidOptionsError,
      );
    }
    expect(() => new MySqlStore({ pool: callbackPool as never })).toThrow(/pool\.promise\(\)/);
  });

  it('migrates idempotently, from several callers at once, and leaves the session sql_mode as it was', async () => {
    const table = uniqueTable('migrate');
    const single = createPool('mariadb', { size: 1 });
    try {
      await query(single, "SET SESSION sql_mode = 'ANSI_QUOTES'");
      await Promise.all([migrate(pool, { table }), migrate(single, { table }), migrate(pool, { table })]);
      await migrate(single, { table });
      const [row] = await query(single, 'SELECT @@SESSION.sql_mode AS mode');
      expect(row?.mode).toBe('ANSI_QUOTES');
      const store = new MySqlStore({ pool: single, table });
      expect((await store.begin({ ...begin, key: key() })).kind).toBe('acquired');
    } finally {
      await dropTable(pool, table);
      await single.end();
    }
  });

  it('prints the DDL for the mysql client: the table, then each procedure between DELIMITER lines', () => {
    const ddl = schemaFor({ table: 'my`keys' });
    expect(ddl).toMatch(/^SET SESSION sql_mode = 'STRICT_ALL_TABLES/);
    expect(ddl).toContain('CREATE TABLE IF NOT EXISTS `my``keys`');
    expect(ddl).toContain('CREATE PROCEDURE IF NOT EXISTS `my``keys_begin_v1`');
    expect(ddl).toContain('CREATE PROCEDURE IF NOT EXISTS `my``keys_claim_v1`');
    expect(ddl).toContain('CREATE PROCEDURE IF NOT EXISTS `my``keys_delete_v1`');
    expect(ddl.match(/^DELIMITER/gm)).toHaveLength(2);
    expect(() => schemaFor({ table: '' })).toThrow(InvalidOptionsError);
    expect(() => schemaFor({ schema: 'x' } as never)).toThrow(InvalidOptionsError);
  });

  it('gives a long table name procedure names within the 64-character limit, distinct per table', async () => {
    const table = `oncely_long_${'x'.repeat(40)}${Math.random().toString(36).slice(2, 10)}`;
    try {
      await migrate(pool, { table });
      const store = new MySqlStore({ pool, table });
      expect((await store.begin({ ...begin, key: key() })).kind).toBe('acquired');
      expect(await store.delete(key())).toBe(false);
    } finally {
      await dropTable(pool, table);
    }
  });
});
