import { SpanKind } from '@opentelemetry/api';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type Outcome } from '../../src/index.js';
import { ATTR, METRIC, otel, SEMCONV } from '../../src/otel/index.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { requireService, services } from '../support/services.js';
import { isChildOf, only, recorded, sdk } from './support/sdk.js';

const tag = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const outcome: Outcome = { status: 201, headers: [], body: Buffer.from('{"ok":true}') };
const telemetry = sdk();
const instrumentation = otel({
  tracerProvider: telemetry.tracerProvider,
  meterProvider: telemetry.meterProvider,
});
let redis: Redis;
let pool: pg.Pool;
const schema = `oncely_otel_${tag}`;

beforeAll(async () => {
  await requireService('redis');
  await requireService('postgres');
  redis = new Redis({ host: '127.0.0.1', port: services.redis.port, maxRetriesPerRequest: 0 });
  pool = new pg.Pool({ connectionString: services.postgres.url, max: 3 });
  pool.on('error', () => {});
});

afterAll(async () => {
  const keys = await redis.keys(`oncely-otel-${tag}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
  await telemetry.shutdown();
});

/** One execution that completes, then its replay; returns the spans of the first. */
async function completeOnce(engine: Engine, key: string, scope: string) {
  telemetry.reset();
  const begun = await engine.begin({ key, fingerprint: 'f', scope });
  if (begun.kind !== 'acquired') throw new Error(`expected a claim, got ${begun.kind}`);
  await begun.claim.complete(outcome);
  const spans = telemetry.spans();
  return { spans, execution: only(spans, `oncely ${scope}`) };
}

describe('store spans follow the database conventions of the store in use', () => {
  it('Redis: EVALSHA of the transition script, db.system.name redis, server address, port and database index', async () => {
    const store = new RedisStore({ client: redis, prefix: `oncely-otel-${tag}` });
    const engine = new Engine({ store, instrumentation });
    const { spans, execution } = await completeOnce(engine, 'redis-key', 'redis-job');
    for (const operation of ['begin', 'complete']) {
      const call = only(spans, `EVALSHA oncely_${operation}`);
      expect(call.kind).toBe(SpanKind.CLIENT);
      expect(isChildOf(call, execution)).toBe(true);
      expect(call.attributes).toEqual({
        [SEMCONV.dbSystem]: 'redis',
        [SEMCONV.dbOperation]: 'EVALSHA',
        [SEMCONV.dbStoredProcedure]: `oncely_${operation}`,
        [SEMCONV.serverAddress]: '127.0.0.1',
        [SEMCONV.serverPort]: services.redis.port,
        [SEMCONV.dbNamespace]: '0',
        [ATTR.storeOperation]: operation,
        [ATTR.storeName]: 'redis',
      });
    }
    const metrics = await telemetry.metrics();
    expect(
      recorded(metrics.get(METRIC.storeDuration.name), {
        [SEMCONV.dbSystem]: 'redis',
        [ATTR.storeOperation]: 'begin',
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('PostgreSQL: the statement on the table, db.system.name postgresql, server, database and table', async () => {
    const store = new PostgresStore({ pool, schema });
    await store.migrate();
    const engine = new Engine({ store, instrumentation });
    const { spans, execution } = await completeOnce(engine, 'pg-key', 'pg-job');
    const expected = { begin: 'INSERT', complete: 'UPDATE' } as const;
    for (const [operation, verb] of Object.entries(expected)) {
      const name = `${verb} ${schema}.oncely_keys`;
      const call = only(spans, name);
      expect(call.kind).toBe(SpanKind.CLIENT);
      expect(isChildOf(call, execution)).toBe(true);
      expect(call.attributes).toEqual({
        [SEMCONV.dbSystem]: 'postgresql',
        [SEMCONV.dbOperation]: verb,
        [SEMCONV.dbQuerySummary]: name,
        [SEMCONV.dbCollection]: `${schema}.oncely_keys`,
        [SEMCONV.serverAddress]: '127.0.0.1',
        [SEMCONV.serverPort]: 5432,
        [SEMCONV.dbNamespace]: 'test',
        [ATTR.storeOperation]: operation,
        [ATTR.storeName]: 'postgres',
      });
    }
  });

  it('PostgreSQL transactional mode: the claim and its COMMIT, children of the execution', async () => {
    const store = new PostgresStore({ pool, schema }).transactional();
    const engine = new Engine({ store, instrumentation });
    const { spans, execution } = await completeOnce(engine, 'pg-tx-key', 'pg-tx-job');
    expect(isChildOf(only(spans, `INSERT ${schema}.oncely_keys`), execution)).toBe(true);
    const commit = only(spans, 'COMMIT');
    expect(isChildOf(commit, execution)).toBe(true);
    expect(commit.attributes).toMatchObject({
      [SEMCONV.dbSystem]: 'postgresql',
      [SEMCONV.dbOperation]: 'COMMIT',
      [ATTR.storeOperation]: 'commit',
    });
    expect(execution.attributes[ATTR.outcome]).toBe('acquired');
  });
});

describe('what a store knows of its server without connecting', () => {
  it('Redis: host and port, or the socket path, as configured; a Cluster or a Sentinel set names no single address', () => {
    const plain = new Redis({ host: 'cache.internal', port: 6380, db: 3, lazyConnect: true });
    expect(new RedisStore({ client: plain }).endpoint).toEqual({
      system: 'redis',
      address: 'cache.internal',
      port: 6380,
      namespace: '3',
    });
    const sentinel = new Redis({ sentinels: [{ host: 's1', port: 26379 }], name: 'main', lazyConnect: true });
    expect(new RedisStore({ client: sentinel }).endpoint).toEqual({ system: 'redis', namespace: '0' });
    const cluster = new Cluster([{ host: 'n1', port: 7000 }], { lazyConnect: true });
    expect(new RedisStore({ client: cluster }).endpoint).toEqual({ system: 'redis' });
    const socket = new Redis({ path: '/run/redis/redis.sock', lazyConnect: true });
    expect(new RedisStore({ client: socket }).endpoint).toEqual({
      system: 'redis',
      address: '/run/redis/redis.sock',
      namespace: '0',
    });
    // An empty path (a setting read from an unset variable) is no socket: ioredis connects to host and port.
    const unset = new Redis({ path: '', host: 'cache.internal', port: 6380, lazyConnect: true });
    expect(new RedisStore({ client: unset }).endpoint).toEqual({
      system: 'redis',
      address: 'cache.internal',
      port: 6380,
      namespace: '0',
    });
    for (const client of [plain, sentinel, socket, unset]) client.disconnect();
    cluster.disconnect();
  });

  it('PostgreSQL: from the pool options or its connection string, and from a client', async () => {
    const fromUrl = new pg.Pool({ connectionString: 'postgres://u:secret@db.internal:6543/payments' });
    expect(new PostgresStore({ pool: fromUrl, schema: 'app' }).endpoint).toEqual({
      system: 'postgresql',
      address: 'db.internal',
      port: 6543,
      namespace: 'payments',
      collection: 'app.oncely_keys',
    });
    const fromOptions = new pg.Pool({ host: 'db2', database: 'ledger' });
    expect(new PostgresStore({ pool: fromOptions, table: 'keys' }).endpoint).toEqual({
      system: 'postgresql',
      address: 'db2',
      namespace: 'ledger',
      collection: 'public.keys',
    });
    const client = new pg.Client({ host: 'db3', port: 5433, database: 'orders' });
    expect(new PostgresStore({ client }).endpoint).toMatchObject({
      address: 'db3',
      port: 5433,
      namespace: 'orders',
    });
    // What is not configured, or is configured empty, is left out, never reported as an empty or undefined field.
    const bare = { system: 'postgresql', collection: 'public.oncely_keys' };
    const unnamed = [
      new pg.Pool({}),
      new pg.Pool({ host: '', database: '', port: 1.5 }),
      new pg.Pool({ connectionString: 'postgres:///' }),
      new pg.Pool({ connectionString: 'host=db4 dbname=ledger' }),
    ];
    for (const pool of unnamed) expect(new PostgresStore({ pool }).endpoint).toStrictEqual(bare);
    const encoded = new pg.Pool({ connectionString: 'postgres://db5/my%20ledger' });
    expect(new PostgresStore({ pool: encoded }).endpoint).toStrictEqual({
      ...bare,
      address: 'db5',
      namespace: 'my ledger',
    });
    await Promise.all([fromUrl, fromOptions, encoded, ...unnamed].map((pool) => pool.end()));
  });
});
