import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, idempotent, isStoreUnavailableError, scopedKey } from '../../src/index.js';
import type { StoredOutcome } from '../../src/store.js';
import { migrate, PostgresStore, schemaFor } from '../../src/stores/postgres/index.js';
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
    const store = new PostgresStore({ pool: db.pool });
    expect(() => store.transactional({ lockTimeoutMs: 0 })).toThrow(InvalidOptionsError);
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
