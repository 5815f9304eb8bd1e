import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Engine,
  InvalidOptionsError,
  idempotent,
  isCorruptRecordError,
  isStoreUnavailableError,
  StoreUnavailableError,
} from '../../src/index.js';
import { type StoredOutcome, scopedKey } from '../../src/store.js';
import {
  isLockNotAvailable,
  isRetryableConflict,
  sqlStateOf,
  storeError,
} from '../../src/stores/postgres/errors.js';
import { migrate, PostgresStore, schemaFor, transactionOf } from '../../src/stores/postgres/index.js';
import { CompletionListener } from '../../src/stores/postgres/listener.js';
import { tableTarget } from '../../src/stores/postgres/sql.js';
import { FakeClock } from '../../src/testing/index.js';
import { requireService } from '../support/services.js';
import { createTestSchema, DATABASE_URL, type TestSchema } from './support.js';

let db: TestSchema;
beforeAll(async () => {
  await requireService('postgres');
  db = await createTestSchema('store', 6);
});
afterAll(async () => db?.drop());

const begin = { fingerprint: 'f', leaseMs: 10_000, retentionMs: 60_000 };
const everyByte = new Uint8Array(256).map((_, i) => i);
const outcome = (body: Uint8Array): StoredOutcome => ({
  status: 200,
  headers: [['x-quote', `it's "quoted" \\ and ünïcode`]],
  body,
  encoding: 'identity',
  storage: 'inline',
});

async function acquireAndComplete(store: PostgresStore, key: string, body: Uint8Array) {
  const claim = await store.begin({ key, ...begin });
  if (claim.kind !== 'acquired') throw new Error(`expected acquired, got ${claim.kind}`);
  expect(
    await store.complete({ key, token: claim.token, outcome: outcome(body), retentionMs: 60_000 }),
  ).toEqual({
    kind: 'ok',
  });
}

describe('PostgresStore', () => {
  it('validates its options at construction', () => {
    const bad: unknown[] = [
      {},
      { pool: db.pool, client: new pg.Client() },
      { pool: db.pool, schema: 'x'.repeat(64) },
      { pool: db.pool, table: '' },
      { pool: db.pool, listen: 'yes' },
      { pool: db.pool, pollIntervalMs: 1 },
      { pool: db.pool, prefix: 'oncely' },
      { pool: {} },
    ];
    for (const options of bad) {
      expect(
        () => new PostgresStore(options as never),
        JSON.stringify(Object.keys(options as object)),
      ).toThrow(InvalidOptionsError);
    }
    // Each refusal names what is wrong, so the message says which option to fix.
    const named: [unknown, RegExp][] = [
      [null, /options/],
      ['postgres://localhost', /options/],
      [{ client: {} }, /pool\/client must be from pg/],
      [{ client: null }, /pool\/client must be from pg/],
      [{ client: 'postgres://localhost' }, /pool\/client must be from pg/],
      [{ client: { query: 'SELECT 1' } }, /pool\/client must be from pg/],
      [{ pool: { query: () => {} } }, /pool must be a pg Pool/],
      [{ pool: db.pool, schema: 5 }, /schema must be a name/],
      [{ pool: db.pool, schema: 'a\0b' }, /schema must be a name/],
      [{ pool: db.pool, table: 'é'.repeat(32) }, /table must be a name/],
      [{ pool: db.pool, clock: 5 }, /clock must be a function/],
      [{ pool: db.pool, listen: 1 }, /listen must be true or false/],
      [{ pool: db.pool, notify: 'no' }, /notify must be true or false/],
      [{ pool: db.pool, prepare: 0 }, /prepare must be true or false/],
      [{ pool: db.pool, pollIntervalMs: 9 }, /pollIntervalMs must be/],
      [{ pool: db.pool, tabel: 'x' }, /PostgresStore: unknown option "tabel"/],
    ];
    for (const [options, message] of named)
      expect(() => new PostgresStore(options as never)).toThrow(message);
    // Names of 63 bytes are the longest PostgreSQL keeps whole, and are accepted; the defaults are public.oncely_keys.
    const longest = new PostgresStore({ pool: db.pool, schema: 's'.repeat(63), table: 't'.repeat(63) });
    expect(longest.endpoint.collection).toBe(`${'s'.repeat(63)}.${'t'.repeat(63)}`);
    expect(new PostgresStore({ pool: db.pool }).endpoint.collection).toBe('public.oncely_keys');
    const store = new PostgresStore({ pool: db.pool });
    expect(() => store.transactional({ lockTimeoutMs: 0 })).toThrow(InvalidOptionsError);
    for (const [options, message] of [
      [null, /options must be an object/],
      [{ client: {} }, /client must be a pg Client/],
      [{ client: null }, /client must be a pg Client/],
      [{ notify: 'yes' }, /notify must be true or false/],
      [{ lockTimeoutMs: 3_600_001 }, /lockTimeoutMs must be/],
      [{ isolation: 'serializable', retries: 3 }, /transactional: unknown option "retries"/],
    ] as const)
      expect(() => store.transactional(options as never)).toThrow(message);
    for (const isolation of ['read committed', 'repeatable read', 'serializable'] as const)
      expect(() => store.transactional({ isolation, lockTimeoutMs: 3_600_000, notify: true })).not.toThrow();
    expect(() => store.transactional({ isolation: 'chaos' as never })).toThrow(InvalidOptionsError);
    expect(() => new PostgresStore({ client: new pg.Client() }).transactional()).toThrow(/Pool/);
  });

  it('migrate is idempotent and safe when several processes run it at once', async () => {
    const schema = `${db.schema}_m`;
    await Promise.all(Array.from({ length: 4 }, () => migrate(db.pool, { schema, table: 'keys' })));
    await migrate(db.pool, { schema, table: 'keys' });
    const { rows } = await db.pool.query(
      `SELECT attstorage FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'body'`,
      [`"${schema}".keys`],
    );
    expect(rows).toEqual([{ attstorage: 'e' }]);
    expect(schemaFor({ schema, table: 'keys' })).toContain(`"${schema}"."keys"`);
    await db.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  });

  it('stores bytes and headers exactly, whatever the pool’s own type parsers or bytea_output say', async () => {
    const odd = new pg.Pool({
      connectionString: DATABASE_URL,
      max: 2,
      options: '-c bytea_output=escape',
      types: { getTypeParser: () => () => 'garbage' } as never,
    });
    try {
      for (const pool of [db.pool, odd]) {
        const store = new PostgresStore({ pool, schema: db.schema, listen: false });
        const key = `bytes-${Math.random()}`;
        await acquireAndComplete(store, key, everyByte);
        const replay = await store.begin({ key, ...begin });
        expect(replay.kind).toBe('replay');
        if (replay.kind !== 'replay') return;
        expect(Buffer.from(replay.outcome.body)).toEqual(Buffer.from(everyByte));
        expect(replay.outcome.headers).toEqual(outcome(everyByte).headers);
        // Transactional mode reads the replay from a simple-query (text) result: the same bytes.
        const tx = idempotent(async () => 'never', {
          store: store.transactional(),
          scope: 's',
          key: () => 'k',
        });
        await tx(undefined);
        expect(await tx(undefined)).toBe('never');
      }
      const store = new PostgresStore({ pool: odd, schema: db.schema, listen: false });
      // Large enough to be brotli-compressed: the replayed body is arbitrary bytes in the escape format.
      const value = { bytes: everyByte, text: 'ünïcode '.repeat(500) };
      const tx = idempotent(async () => value, { store: store.transactional(), scope: 'b', key: () => 'k' });
      await tx(undefined);
      expect(await tx.execute(undefined)).toEqual({ value, replayed: true });
    } finally {
      await odd.end();
    }
  });

  it('purges expired rows in bounded batches and leaves live ones; stats count by state', async () => {
    const clock = new FakeClock();
    const schema = `${db.schema}_p`;
    await migrate(db.pool, { schema });
    const store = new PostgresStore({ pool: db.pool, schema, clock: clock.now, listen: false });
    for (let i = 0; i < 250; i++) {
      await store.begin({ key: `old-${i}`, fingerprint: 'f', leaseMs: 1_000, retentionMs: 5_000 });
    }
    await acquireAndComplete(store, 'live-completed', everyByte);
    await store.begin({ key: 'live-progress', ...begin });
    clock.advance(5_000);
    expect(await store.stats()).toMatchObject({ records: 252, inProgress: 1, completed: 1, released: 0 });
    expect(await store.purgeExpired({ batchSize: 40, maxBatches: 2 })).toBe(80);
    expect(await store.purgeExpired({ batchSize: 40 })).toBe(170);
    expect(await store.purgeExpired()).toBe(0);
    const stats = await store.stats();
    expect(stats).toMatchObject({ records: 2, inProgress: 1, completed: 1 });
    expect(stats.bytes).toBeGreaterThan(0);
    await expect(store.purgeExpired({ batchSize: 0 })).rejects.toThrow(InvalidOptionsError);
    await db.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  });

  it('a delete in the millisecond of the claim leaves a tombstone that purge keeps until the clock passes its token', async () => {
    const clock = new FakeClock();
    const store = new PostgresStore({ pool: db.pool, schema: db.schema, clock: clock.now, listen: false });
    const key = `tomb-${clock.now()}`;
    const row = async () =>
      (
        await db.pool.query(
          `SELECT state, fingerprint, token, expires_at_ms, body FROM ${db.table('oncely_keys')} WHERE key = $1`,
          [key],
        )
      ).rows[0];
    const first = await store.begin({ key, ...begin });
    expect(first.kind).toBe('acquired');
    if (first.kind !== 'acquired') return;
    expect(await store.delete(key)).toBe(true);
    // The token is the clock (claimed this millisecond): the row stays, emptied, so the next claim out-ranks it.
    expect(await row()).toMatchObject({ state: 'released', fingerprint: '', token: String(first.token) });
    expect(Number((await row()).expires_at_ms)).toBe(clock.now());
    expect(await store.get(key)).toBeUndefined();
    expect(await store.purgeExpired()).toBe(0);
    expect(await row()).toBeDefined();
    clock.advance(1);
    expect(await store.purgeExpired()).toBe(1);
    expect(await row()).toBeUndefined();
    // A record whose token the clock has passed is removed outright: nothing to keep.
    const second = await store.begin({ key, ...begin });
    expect(second.kind === 'acquired' && second.token > first.token).toBe(true);
    clock.advance(1);
    expect(await store.delete(key)).toBe(true);
    expect(await row()).toBeUndefined();
  });

  it('an unreachable server is a StoreUnavailableError with the driver error as cause', async () => {
    const dead = new pg.Pool({ host: '127.0.0.1', port: 1, user: 'postgres', database: 'test', max: 1 });
    const store = new PostgresStore({ pool: dead, listen: false });
    const error = await store.begin({ key: 'k', ...begin }).catch((e: unknown) => e);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as Error & { cause: { code: string } }).cause.code).toBe('ECONNREFUSED');
    const txError = await idempotent(async () => 1, {
      store: store.transactional(),
      scope: 'x',
      key: () => 'k',
    })(undefined).catch((e: unknown) => e);
    expect(isStoreUnavailableError(txError)).toBe(true);
    await dead.end();
  });

  it('a missing table names the fix: run migrate', async () => {
    const store = new PostgresStore({
      pool: db.pool,
      schema: db.schema,
      table: 'not_migrated',
      listen: false,
    });
    const error = await store.get('k').catch((e: unknown) => e);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as Error).message).toMatch(/42P01.*migrate/);
  });

  it('works over one caller-owned Client, LISTEN included', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    const store = new PostgresStore({ client, schema: db.schema });
    try {
      const key = `client-${Math.random()}`;
      const claim = await store.begin({ key, ...begin });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      const waiting = store.waitFor(key, { timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await store.complete({ key, token: claim.token, outcome: outcome(everyByte), retentionMs: 60_000 });
      expect(await waiting).toBe(true);
    } finally {
      await store.close();
      await client.end();
    }
  });

  it('waitFor still wakes by polling when LISTEN is off, or its connection is killed', async () => {
    for (const listen of [false, true]) {
      const store = new PostgresStore({ pool: db.pool, schema: db.schema, listen, pollIntervalMs: 50 });
      try {
        const key = `poll-${listen}-${Math.random()}`;
        const claim = await store.begin({ key, ...begin });
        if (claim.kind !== 'acquired') throw new Error(claim.kind);
        expect(await store.waitFor(key, { timeoutMs: 30 })).toBe(false);
        if (listen) {
          const { channel } = tableTarget(db.schema, 'oncely_keys');
          const killed = await db.pool.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1',
            [`LISTEN "${channel}"`],
          );
          expect(killed.rowCount).toBe(1);
        }
        const waiting = store.waitFor(key, { timeoutMs: 10_000 });
        await new Promise((resolve) => setTimeout(resolve, 60));
        await store.complete({ key, token: claim.token, outcome: outcome(everyByte), retentionMs: 60_000 });
        expect(await waiting).toBe(true);
      } finally {
        await store.close();
      }
    }
  });

  it('waitFor resolves false when its signal aborts', async () => {
    const store = new PostgresStore({ pool: db.pool, schema: db.schema });
    try {
      const key = `abort-${Math.random()}`;
      await store.begin({ key, ...begin });
      const controller = new AbortController();
      const waiting = store.waitFor(key, { timeoutMs: 10_000, signal: controller.signal });
      setTimeout(() => controller.abort(), 30);
      expect(await waiting).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('the engine compresses large outcomes and the store keeps the bytes as sealed (br, bytea)', async () => {
    const store = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false });
    const big = { lines: Array.from({ length: 400 }, (_, i) => `line ${i} of a compressible result`) };
    const run = idempotent(async () => big, { store, scope: 'big', key: () => 'k' });
    await run(undefined);
    expect(await run.execute(undefined)).toEqual({ value: big, replayed: true });
    const { rows } = await db.pool.query(
      `SELECT encoding, octet_length(body) AS bytes FROM "${db.schema}".oncely_keys WHERE key = $1`,
      [scopedKey('fn:big', 'k')],
    );
    expect(rows[0].encoding).toBe('br');
    expect(rows[0].bytes).toBeLessThan(JSON.stringify(big).length / 4);
  });
});

describe('the LISTEN connection behind waitFor', () => {
  const notify = (channel: string, payload: string) =>
    db.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  const settledWithin = async (promise: Promise<unknown>, ms: number) =>
    Promise.race([
      promise.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
    ]);
  const channelOf = () => `oncely_test_${Math.random().toString(36).slice(2)}`;
  const dedicatedPool = () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    pool.on('error', () => {});
    return pool;
  };

  it('wakes every waiter of the notified key, and only those; cancel forgets one waiter, not its neighbours', async () => {
    const named = channelOf();
    const live = new CompletionListener({ pool: db.pool }, named);
    try {
      await live.ready();
      const first = live.next('k');
      const second = live.next('k');
      const other = live.next('other');
      first.cancel();
      first.cancel();
      // A notification for a key nobody waits for, and one on another channel, wake no one.
      await notify(named, 'nobody');
      await notify(`${named}_x`, 'k');
      expect(await settledWithin(second.notified, 100)).toBe(false);
      await notify(named, 'k');
      expect(await settledWithin(second.notified, 2_000)).toBe(true);
      expect(await settledWithin(other.notified, 50)).toBe(false);
      other.cancel();
      second.cancel();
      // A waiter that came after a cancelled one is still woken.
      const later = live.next('k');
      first.cancel();
      await notify(named, 'k');
      expect(await settledWithin(later.notified, 2_000)).toBe(true);
    } finally {
      await live.close();
    }
  });

  it('on close, stops listening and gives its connection back to the pool whole; after close, never listens again', async () => {
    const pool = dedicatedPool();
    const channel = channelOf();
    const listener = new CompletionListener({ pool }, channel);
    try {
      await listener.ready();
      expect(pool.idleCount).toBe(0);
      await listener.close();
      expect(pool.totalCount).toBe(1);
      expect(pool.idleCount).toBe(1);
      const { rows } = await pool.query('SELECT pg_listening_channels() AS channel');
      expect(rows).toEqual([]);
      listener.next('k');
      await listener.ready();
      expect(pool.idleCount).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('closed while LISTEN is on its way, it gives the connection back and listens to nothing', async () => {
    const pool = dedicatedPool();
    const listener = new CompletionListener({ pool }, channelOf());
    try {
      const ready = listener.ready();
      await listener.close();
      expect(await ready).toBeUndefined();
      // Back whole, to be used again: not closed as a broken one would be.
      expect([pool.totalCount, pool.idleCount]).toEqual([1, 1]);
      const { rows } = await pool.query('SELECT pg_listening_channels() AS channel');
      expect(rows).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it('wakes its waiters when its connection dies, and waits a second before listening again', async () => {
    const channel = channelOf();
    const listener = new CompletionListener({ pool: db.pool }, channel);
    try {
      await listener.ready();
      const waiting = listener.next('k');
      const killed = await db.pool.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1',
        [`LISTEN "${channel}"`],
      );
      expect(killed.rowCount).toBe(1);
      expect(await settledWithin(waiting.notified, 2_000)).toBe(true);
      waiting.cancel();
      // Within the pause nobody listens: a notification now is missed (the waiters poll meanwhile).
      const early = listener.next('k');
      await listener.ready();
      await notify(channel, 'k');
      expect(await settledWithin(early.notified, 200)).toBe(false);
      early.cancel();
    } finally {
      await listener.close();
    }
  });

  it('a pool that cannot connect leaves waiters to their polls: ready resolves, and no retry within the pause', async () => {
    const dead = new pg.Pool({ host: '127.0.0.1', port: 1, user: 'postgres', database: 'test', max: 1 });
    let attempts = 0;
    const connect = dead.connect.bind(dead);
    dead.connect = ((callback: never) => {
      attempts++;
      return connect(callback);
    }) as typeof dead.connect;
    const listener = new CompletionListener({ pool: dead }, channelOf());
    expect(await listener.ready()).toBeUndefined();
    expect(attempts).toBe(1);
    listener.next('k').cancel();
    expect(await listener.ready()).toBeUndefined();
    expect(attempts).toBe(1);
    // After the pause, the next waiter tries again.
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    expect(await listener.ready()).toBeUndefined();
    expect(attempts).toBe(2);
    await listener.close();
    await dead.end();
  });

  it('over a caller-owned Client: notifications of its other channels wake no one, and its death wakes everyone', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    client.on('error', () => {});
    const channel = channelOf();
    const listener = new CompletionListener({ client }, channel);
    try {
      await client.query(`LISTEN "${channel}_own"`);
      await listener.ready();
      const waiting = listener.next('k');
      await notify(`${channel}_own`, 'k');
      expect(await settledWithin(waiting.notified, 100)).toBe(false);
      const pid = (client as unknown as { processID: number }).processID;
      await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
      expect(await settledWithin(waiting.notified, 2_000)).toBe(true);
    } finally {
      await listener.close();
      await client.end().catch(() => {});
    }
  });
});

describe('PostgresStore statements', () => {
  it('any schema and table name works end to end, quotes and backslashes included', async () => {
    const schema = `${db.schema}_q"'\\`;
    const table = `it's \\ "odd"`;
    await migrate(db.pool, { schema, table });
    const store = new PostgresStore({ pool: db.pool, schema, table });
    // Each table notifies on a channel of its own, a plain identifier whatever the names.
    expect(tableTarget(schema, table).channel).toMatch(/^oncely_[0-9a-f]{24}$/);
    expect(tableTarget(schema, table).channel).not.toBe(tableTarget(db.schema, 'oncely_keys').channel);
    try {
      const key = `k'\\"${Math.random()}`;
      const claim = await store.begin({ key, ...begin });
      if (claim.kind !== 'acquired') throw new Error(claim.kind);
      const waiting = store.waitFor(key, { timeoutMs: 10_000 });
      await store.complete({ key, token: claim.token, outcome: outcome(everyByte), retentionMs: 60_000 });
      expect(await waiting).toBe(true);
      expect(await store.get(key)).toMatchObject({ state: 'completed', token: claim.token });
      expect(await store.stats()).toMatchObject({ records: 1, completed: 1 });
      // Transactional mode without prepared statements writes the values into the claim as literals.
      const tx = new PostgresStore({ pool: db.pool, schema, table, prepare: false }).transactional();
      const engine = new Engine({ store: tx });
      const txKey = `tx'\\${Math.random()}`;
      const begun = await engine.begin({ key: txKey, fingerprint: `f'\\"` });
      if (begun.kind !== 'acquired') throw new Error(begun.kind);
      await begun.claim.complete({ status: 201, headers: [], body: everyByte });
      expect(await engine.begin({ key: txKey, fingerprint: `f'\\"` })).toMatchObject({ kind: 'replay' });
      expect(await engine.begin({ key: txKey, fingerprint: 'other' })).toMatchObject({ kind: 'mismatch' });
    } finally {
      await store.close();
      await db.pool.query(`DROP SCHEMA "${schema.replaceAll('"', '""')}" CASCADE`);
    }
  });

  it('NOTIFY on its channel as the notify options say: on by default, off in transactional mode unless asked', async () => {
    const listener = new pg.Client({ connectionString: DATABASE_URL });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query(`LISTEN "${tableTarget(db.schema, 'oncely_keys').channel}"`);
    const settle = async (store: PostgresStore | ReturnType<PostgresStore['transactional']>, key: string) => {
      const engine = new Engine({ store });
      const begun = await engine.begin({ key, fingerprint: 'f' });
      if (begun.kind !== 'acquired') throw new Error(begun.kind);
      await begun.claim.complete({ status: 201, headers: [], body: everyByte });
    };
    const plain = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false });
    const quiet = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false, notify: false });
    const run = Math.random().toString(36).slice(2);
    try {
      await settle(plain, `${run}-plain`);
      await settle(quiet, `${run}-quiet`);
      await settle(plain.transactional(), `${run}-tx`);
      await settle(plain.transactional({ notify: true }), `${run}-tx-notify`);
      await listener.query('SELECT 1');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard.filter((key) => key.startsWith(run)).sort()).toEqual(
        [`${run}-plain`, `${run}-tx-notify`].sort(),
      );
    } finally {
      await listener.end();
    }
  });

  it('prepares its statements on each connection by default, and not with prepare: false', async () => {
    for (const prepare of [undefined, false]) {
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      const store = new PostgresStore({
        pool,
        schema: db.schema,
        listen: false,
        ...(prepare === false && { prepare }),
      });
      await store.get('nothing');
      const { rows } = await pool.query('SELECT name FROM pg_prepared_statements');
      const names = rows.map((row: { name: string }) => row.name);
      if (prepare === false) expect(names).toEqual([]);
      else expect(names).toEqual([expect.stringMatching(/^oncely_p_[0-9a-f]{32}$/)]);
      await pool.end();
    }
  });
});

describe('PostgresStore migrate', () => {
  it('checks what it is given, runs over a Client as well as a Pool, and store.migrate() migrates the store’s table', async () => {
    for (const bad of [null, {}, 'postgres://localhost'])
      await expect(migrate(bad as never)).rejects.toThrow(/migrate: pass a pg Pool or Client/);
    expect(() => schemaFor({ schema: 'a', tabel: 'b' } as never)).toThrow(/migrate: unknown option "tabel"/);
    const ddl = schemaFor();
    expect(ddl).toContain('"public"."oncely_keys"');
    expect(ddl).toContain('"oncely_keys_expires_at_idx"');
    expect(ddl).not.toMatch(/\{\{|^\s*--/m);
    // One line of DDL per line of schema.sql, as readable as the file it comes from.
    expect(ddl.split('\n').length).toBeGreaterThan(10);
    // One statement line per line of schema.sql, as readable as the file it comes from.
    expect(ddl.split('\n').length).toBeGreaterThan(10);
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    const schema = `${db.schema}_c`;
    try {
      await migrate(client, { schema, table: 'keys' });
      expect((await client.query(`SELECT count(*) FROM "${schema}".keys`)).rows).toEqual([{ count: '0' }]);
      const store = new PostgresStore({ pool: db.pool, schema, table: 'store_keys', listen: false });
      await store.migrate();
      expect(await store.get('k')).toBeUndefined();
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });

  it('a pooled migration gives its connection back; one that fails is rolled back, reported with its SQLSTATE, its connection dropped', async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    pool.on('error', () => {});
    const schema = `${db.schema}_f`;
    try {
      await migrate(pool, { schema, table: 'good' });
      expect([pool.totalCount, pool.idleCount]).toEqual([1, 1]);
      // A table of another version (no expires_at_ms): the index cannot be created.
      await pool.query(`CREATE TABLE "${schema}".old (key text PRIMARY KEY)`);
      const error = await migrate(pool, { schema, table: 'old' }).catch((e: unknown) => e);
      expect(isStoreUnavailableError(error)).toBe(true);
      expect((error as Error).message).toMatch(/postgres migrate failed \(SQLSTATE 42703/);
      expect(pool.totalCount).toBe(0);
      // Over a caller's Client, the failed migration leaves no transaction open behind it.
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        await expect(migrate(client, { schema, table: 'old' })).rejects.toSatisfy(isStoreUnavailableError);
        expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await client.end();
      }
      const dead = new pg.Pool({ host: '127.0.0.1', port: 1, user: 'postgres', database: 'test', max: 1 });
      await expect(migrate(dead)).rejects.toSatisfy(isStoreUnavailableError);
      await dead.end();
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    }
  });
});

describe('PostgresStore rows', () => {
  it('a row changed by someone else is reported corrupt, never replayed', async () => {
    const store = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false });
    const table = `"${db.schema}".oncely_keys`;
    const changes = [
      'status = NULL',
      'body = NULL',
      "encoding = 'zstd-ish'",
      "storage = 'elsewhere'",
      `headers = '{"a": 1}'`,
      `headers = '["content-type"]'`,
      `headers = '[["content-type"]]'`,
      `headers = '[["content-type", 1]]'`,
      `headers = '[[1, "text/plain"]]'`,
      `headers = '[["content-type", "text/plain", "charset=utf-8"]]'`,
      `headers = '[["content-type", "text/plain", "charset=utf-8"]]'`,
    ];
    for (const change of changes) {
      const key = `corrupt-${Math.random()}`;
      await acquireAndComplete(store, key, everyByte);
      await db.pool.query(`UPDATE ${table} SET ${change} WHERE key = $1`, [key]);
      await expect(store.get(key), change).rejects.toSatisfy(isCorruptRecordError);
      await expect(store.begin({ key, ...begin }), change).rejects.toSatisfy(isCorruptRecordError);
    }
  });

  it('get gives a completed record its completion time and outcome, others neither', async () => {
    const clock = new FakeClock();
    const store = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false, clock: clock.now });
    const key = `record-${Math.random()}`;
    const claim = await store.begin({ key, ...begin });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    expect(await store.get(key)).toMatchObject({
      state: 'inProgress',
      completedAt: undefined,
      outcome: undefined,
    });
    clock.advance(5);
    await store.complete({ key, token: claim.token, outcome: outcome(everyByte), retentionMs: 60_000 });
    const record = await store.get(key);
    expect(record).toMatchObject({ state: 'completed', completedAt: clock.now(), outcome: { status: 200 } });
  });
});

describe('PostgresStore waitFor', () => {
  it('is true at once for a key nobody holds, or whose holder’s lease ran out (by the store’s clock, or the server’s)', async () => {
    const clock = new FakeClock();
    const store = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false, clock: clock.now });
    expect(await store.waitFor(`nobody-${Math.random()}`, { timeoutMs: 5_000 })).toBe(true);
    const key = `lapsed-${Math.random()}`;
    await store.begin({ key, ...begin, leaseMs: 100 });
    expect(await store.waitFor(key, { timeoutMs: 20 })).toBe(false);
    clock.advance(100);
    expect(await store.waitFor(key, { timeoutMs: 5_000 })).toBe(true);
    const serverTime = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false });
    const short = `lapsed-${Math.random()}`;
    await serverTime.begin({ key: short, ...begin, leaseMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await serverTime.waitFor(short, { timeoutMs: 5_000 })).toBe(true);
  });

  it('polls with backoff when nothing wakes it: a handful of reads, not a busy loop', async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    let reads = 0;
    pool.query = ((...args: unknown[]) => {
      reads++;
      return query(...args);
    }) as typeof pool.query;
    try {
      const store = new PostgresStore({ pool, schema: db.schema, listen: false, pollIntervalMs: 1_000 });
      const key = `held-${Math.random()}`;
      await store.begin({ key, ...begin });
      reads = 0;
      expect(await store.waitFor(key, { timeoutMs: 300 })).toBe(false);
      // Looks at 0, 10, 30, 70, 150 and 300 ms.
      expect(reads).toBeGreaterThanOrEqual(5);
      expect(reads).toBeLessThanOrEqual(8);
    } finally {
      await pool.end();
    }
  });

  it('an abort ends a long wait at once, not at the next look', async () => {
    const store = new PostgresStore({
      pool: db.pool,
      schema: db.schema,
      listen: false,
      pollIntervalMs: 5_000,
    });
    const key = `held-${Math.random()}`;
    await store.begin({ key, ...begin });
    const controller = new AbortController();
    const waiting = store.waitFor(key, { timeoutMs: 30_000, signal: controller.signal });
    // By now the pauses between looks have grown to 1,280 ms.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const abortedAt = Date.now();
    controller.abort();
    expect(await waiting).toBe(false);
    expect(Date.now() - abortedAt).toBeLessThan(500);
  });
});

describe('PostgresStore maintenance', () => {
  it('listens by default, on one connection of its pool, and gives it back on close', async () => {
    const started = new Date();
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    pool.on('error', () => {});
    try {
      const store = new PostgresStore({ pool, schema: db.schema });
      expect(await store.waitFor(`free-${Math.random()}`, { timeoutMs: 100 })).toBe(true);
      // The LISTEN connection stays checked out, listening on the table's channel.
      expect(pool.totalCount - pool.idleCount).toBe(1);
      const listening = await db.pool.query(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1 AND backend_start > $2',
        [`LISTEN "${tableTarget(db.schema, 'oncely_keys').channel}"`, started],
      );
      expect(listening.rows[0].n).toBe(1);
      await store.close();
      expect(pool.totalCount - pool.idleCount).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it('purge options are checked by name; stats count released records', async () => {
    const store = new PostgresStore({ pool: db.pool, schema: db.schema, listen: false });
    await expect(store.purgeExpired({ batchSize: 0 })).rejects.toThrow(/batchSize must be/);
    await expect(store.purgeExpired({ batchSize: 1_000_001 })).rejects.toThrow(/batchSize must be/);
    await expect(store.purgeExpired({ maxBatches: 0 })).rejects.toThrow(/maxBatches must be/);
    const before = await store.stats();
    const key = `released-${Math.random()}`;
    const claim = await store.begin({ key, ...begin });
    if (claim.kind !== 'acquired') throw new Error(claim.kind);
    await store.release({ key, token: claim.token });
    expect((await store.stats()).released).toBe((before.released ?? 0) + 1);
    // The transactional view counts the same table.
    const viaView = await store.transactional().stats();
    const direct = await store.stats();
    expect({ ...viaView, bytes: 0 }).toEqual({ ...direct, bytes: 0 });
  });

  it('each failing call names its operation (here: a table never migrated, which also names the fix)', async () => {
    const store = new PostgresStore({
      pool: db.pool,
      schema: db.schema,
      table: 'never_migrated',
      listen: false,
    });
    const calls: [string, () => Promise<unknown>][] = [
      ['begin', () => store.begin({ key: 'k', ...begin })],
      [
        'complete',
        () => store.complete({ key: 'k', token: 1, outcome: outcome(everyByte), retentionMs: 60_000 }),
      ],
      ['release', () => store.release({ key: 'k', token: 1 })],
      ['renew', () => store.renew({ key: 'k', token: 1, leaseMs: 1_000 })],
      ['get', () => store.get('k')],
      ['delete', () => store.delete('k')],
      ['stats', () => store.stats()],
      ['purge', () => store.purgeExpired()],
    ];
    for (const [operation, call] of calls) {
      const error = await call().catch((e: unknown) => e);
      expect(isStoreUnavailableError(error), operation).toBe(true);
      expect((error as Error).message).toMatch(
        new RegExp(`^postgres ${operation} failed \\(SQLSTATE 42P01.*migrate`),
      );
    }
    expect(store.name).toBe('postgres');
    expect(store.transactional().name).toBe('postgres');
  });
});

describe('PostgresStore errors', () => {
  const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { severity: 'ERROR', code });

  it('a statement that keeps losing serialization races runs 10 times on a pool, once on a Client, then fails with the 40001', async () => {
    let calls = 0;
    const failing = <T extends object>(queryable: T): T =>
      Object.assign(Object.create(queryable), {
        query: async () => {
          calls += 1;
          throw pgError('40001');
        },
      });
    const client = new pg.Client({ connectionString: DATABASE_URL });
    for (const [source, expected] of [
      [{ pool: failing(db.pool) }, 10],
      [{ client: failing(client) }, 1],
    ] as const) {
      calls = 0;
      const store = new PostgresStore({ ...source, schema: db.schema, listen: false });
      const error = await store.get('k').catch((e: unknown) => e);
      expect(isStoreUnavailableError(error)).toBe(true);
      expect((error as { cause?: { code?: string } }).cause?.code).toBe('40001');
      expect(calls).toBe(expected);
    }
  });

  it('server errors carry their SQLSTATE and hint; network errors, which have a code but no severity, do not', () => {
    const missing = storeError('get', pgError('42P01'));
    expect(isStoreUnavailableError(missing)).toBe(true);
    expect(missing.message).toBe(
      'postgres get failed (SQLSTATE 42P01: pg 42P01); the table does not exist: run store.migrate() or `oncely migrate`',
    );
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(storeError('begin', refused).message).toBe(
      'postgres begin failed (connect ECONNREFUSED 127.0.0.1:1)',
    );
    expect(storeError('begin', refused).cause).toBe(refused);
    expect(sqlStateOf(refused)).toBeUndefined();
    expect(sqlStateOf(Object.assign(new Error('x'), { severity: 'ERROR' }))).toBeUndefined();
    expect(sqlStateOf(Object.assign(new Error('x'), { severity: 'ERROR', code: 7 }))).toBeUndefined();
    expect(sqlStateOf({ severity: 'ERROR', code: '40001' })).toBeUndefined();
    expect(storeError('begin', 'text').message).toBe('postgres begin failed (text)');
    const oncely = new StoreUnavailableError('already mapped');
    expect(storeError('begin', oncely)).toBe(oncely);
  });

  it('serialization failures and deadlocks may run again; a lock timeout is something else', () => {
    expect(isRetryableConflict(pgError('40001'))).toBe(true);
    expect(isRetryableConflict(pgError('40P01'))).toBe(true);
    expect(isRetryableConflict(pgError('55P03'))).toBe(false);
    expect(isLockNotAvailable(pgError('55P03'))).toBe(true);
    expect(isLockNotAvailable(pgError('40001'))).toBe(false);
  });

  it('a transactional store that cannot connect says so, with the driver error as cause', async () => {
    const dead = new pg.Pool({ host: '127.0.0.1', port: 1, user: 'postgres', database: 'test', max: 1 });
    const tx = new PostgresStore({ pool: dead, listen: false }).transactional();
    const error = await tx
      .beginTransaction({ key: 'k', fingerprint: 'f', leaseMs: 1_000, retentionMs: 60_000, waitMs: 0 })
      .catch((e: unknown) => e);
    expect(isStoreUnavailableError(error)).toBe(true);
    expect((error as Error & { cause: { code: string } }).cause.code).toBe('ECONNREFUSED');
    await dead.end();
  });

  it('under serializable default isolation, concurrent duplicates race without any store failure', async () => {
    const url = new URL(DATABASE_URL);
    url.searchParams.set('options', '-c default_transaction_isolation=serializable');
    const pool = new pg.Pool({ connectionString: url.toString(), max: 8 });
    pool.on('error', () => {});
    try {
      const store = new PostgresStore({ pool, schema: db.schema, listen: false });
      for (let burst = 0; burst < 3; burst++) {
        const key = `serializable-${burst}-${Math.random()}`;
        const results = await Promise.all(Array.from({ length: 16 }, () => store.begin({ key, ...begin })));
        expect(results.filter((result) => result.kind === 'acquired')).toHaveLength(1);
      }
    } finally {
      await pool.end();
    }
  });
});

describe('transactionOf', () => {
  it('hands out the transaction of a transactional context, and refuses anything else', async () => {
    for (const context of [
      undefined,
      null,
      {},
      { transaction: undefined },
      { transaction: null },
      { transaction: 'pg' },
      { transaction: {} },
    ])
      expect(() => transactionOf(context as never), JSON.stringify(context)).toThrow(
        /transactionOf: no transaction in this context/,
      );
    const handle = { query: () => {} };
    expect(transactionOf({ transaction: handle })).toBe(handle);
  });
});
