import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type Outcome } from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { requireService, services } from '../support/services.js';

const exec = promisify(execFile);
const cli = new URL('../../dist/cli/main.js', import.meta.url).pathname;
const oncely = (...args: string[]) =>
  exec(process.execPath, [cli, ...args], {
    env: { ...process.env, REDIS_URL: services.redis.url, DATABASE_URL: services.postgres.url },
  });
const outcome: Outcome = {
  status: 201,
  headers: [['content-type', 'application/json']],
  body: Buffer.from('{"id":"pay_cli"}'),
};

describe('CLI against the real stores', () => {
  const prefix = `oncely-cli-${randomBytes(4).toString('hex')}`;
  const schema = `oncely_cli_${randomBytes(4).toString('hex')}`;
  let redis: Redis;
  let pool: pg.Pool;

  beforeAll(async () => {
    await requireService('redis');
    await requireService('postgres');
    redis = new Redis(services.redis.url);
    pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('inspect shows a Redis record with its stored response; stats counts it; --delete frees the key', async () => {
    const engine = new Engine({ store: new RedisStore({ client: redis, prefix }) });
    await engine.execute({
      key: scopedKey('POST /payments', 'order-7'),
      fingerprint: 'f',
      run: async () => outcome,
      settle: (o) => ({ keep: true, outcome: o }),
    });
    const { stdout } = await oncely(
      'inspect',
      '--store',
      'redis',
      '--prefix',
      prefix,
      '--scope',
      'POST /payments',
      '--key',
      'order-7',
    );
    expect(stdout).toMatch(/state\s+completed/);
    expect(stdout).toMatch(/status 201/);
    expect(stdout).toContain('{"id":"pay_cli"}');
    expect((await oncely('stats', '--store', 'redis', '--prefix', prefix)).stdout).toMatch(
      /redis \S+\s+1\s+0\s+1\s+0/,
    );
    await oncely(
      'inspect',
      '--store',
      'redis',
      '--prefix',
      prefix,
      '--scope',
      'POST /payments',
      '--key',
      'order-7',
      '--delete',
    );
    expect(
      (
        await oncely(
          'inspect',
          '--store',
          'redis',
          '--prefix',
          prefix,
          '--scope',
          'POST /payments',
          '--key',
          'order-7',
        )
      ).stdout,
    ).toMatch(/no record/);
  });

  it('migrate creates the keys table and the outbox; purge removes expired PostgreSQL records', async () => {
    await oncely('migrate', '--schema', schema);
    const tables = await pool.query<{ table_name: string }>(
      'select table_name from information_schema.tables where table_schema = $1 order by 1',
      [schema],
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual(['oncely_keys', 'oncely_outbox']);
    const { PostgresStore } = await import('../../src/stores/postgres/index.js');
    const store = new PostgresStore({ pool, schema, listen: false });
    for (const key of ['a', 'b', 'c']) {
      const begun = await store.begin({ key, fingerprint: 'f', leaseMs: 1_000, retentionMs: 1 });
      if (begun.kind !== 'acquired') throw new Error('expected to acquire');
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await oncely('purge', '--store', 'postgres', '--schema', schema)).stdout).toMatch(
      /removed 3 expired records/,
    );
    expect((await oncely('outbox', 'stats', '--schema', schema)).stdout).toMatch(/pending/);
  });

  it('the demo runs on Redis and on PostgreSQL (transactional, with its outbox events relayed) once per key', async () => {
    for (const store of ['redis', 'postgres']) {
      const { stdout } = await oncely(
        'demo',
        '--store',
        store,
        '--keys',
        '3',
        '--duplicates',
        '15',
        '--processing-ms',
        '20',
      );
      expect(stdout).toMatch(/OK: 3 keys, each executed exactly once/);
      if (store === 'postgres')
        expect(stdout).toMatch(/the relay published one payment.created event for each of the 3 payments/);
    }
  });

  it('a --prefix the Redis store refuses is a usage error, and the connected client does not hold the process', async () => {
    // 6 s: a client left connected would keep the process alive until the test's timeout kills it.
    const failure = await exec(process.execPath, [cli, 'stats', '--store', 'redis', '--prefix', 'a b'], {
      env: { ...process.env, REDIS_URL: services.redis.url },
      timeout: 6_000,
    }).catch((error: { code: number | null; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toBe(
      'oncely: --prefix "a b" is not valid: RedisStore: prefix must be a non-empty string without braces or whitespace (braces would pin every record to one Cluster slot)\n',
    );
  });

  it('commands that need an outside store refuse the memory store with a clear message', async () => {
    const failure = await oncely('stats').catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toMatch(/give --store redis or --store postgres/);
  });
});
