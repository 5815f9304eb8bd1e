/**
 * @module `oncely inspect` (the built CLI) shows the route or scope a record was labelled with, on Redis and
 * PostgreSQL, and `-` for a record without one.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopedKey } from '../../src/core/key.js';
import type { Store } from '../../src/core/store.js';
import { Engine } from '../../src/index.js';
import { migrate, PostgresStore } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { requireService, services } from '../support/services.js';

const exec = promisify(execFile);
const cli = new URL('../../dist/cli/main.js', import.meta.url).pathname;
const oncely = (...args: string[]) =>
  exec(process.execPath, [cli, ...args], {
    env: { ...process.env, REDIS_URL: services.redis.url, DATABASE_URL: services.postgres.url },
  });

/** A completed record made through the engine, with `scope` as the engine's scope name (so the label) or none. */
async function record(store: Store, key: string, scope: string | undefined): Promise<void> {
  await new Engine({ store }).execute({
    key,
    fingerprint: 'f',
    ...(scope === undefined ? {} : { scope }),
    run: async () => 1,
    settle: () => ({ keep: true, outcome: { status: 201, headers: [], body: Buffer.from('{}') } }),
  });
}

describe('oncely inspect shows the label', () => {
  const prefix = `oncely-cli-label-${randomBytes(4).toString('hex')}`;
  const schema = `oncely_cli_label_${randomBytes(4).toString('hex')}`;
  let redis: Redis;
  let pool: pg.Pool;

  beforeAll(async () => {
    await requireService('redis');
    await requireService('postgres');
    redis = new Redis(services.redis.url);
    pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
    await migrate(pool, { schema });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('Redis: the route of a labelled record, - for one without', async () => {
    const store = new RedisStore({ client: redis, prefix });
    const labelled = scopedKey('scope-a', 'k1');
    const plain = scopedKey('scope-a', 'k2');
    await record(store, labelled, 'POST /payments/:id');
    await record(store, plain, undefined);
    const args = ['inspect', '--store', 'redis', '--prefix', prefix, '--hashed'];
    expect((await oncely(...args, labelled)).stdout).toMatch(/route \/ scope\s+POST \/payments\/:id\n/);
    expect((await oncely(...args, plain)).stdout).toMatch(/route \/ scope\s+-\n/);
  });

  it('PostgreSQL: the scope of idempotent() records (fn:<scope>)', async () => {
    const store = new PostgresStore({ pool, schema });
    const key = scopedKey('fn:charge', 'o-1');
    await record(store, key, 'fn:charge');
    const { stdout } = await oncely('inspect', '--store', 'postgres', '--schema', schema, '--hashed', key);
    expect(stdout).toMatch(/route \/ scope\s+fn:charge\n/);
    expect(stdout).toMatch(/state\s+completed/);
  });
});
