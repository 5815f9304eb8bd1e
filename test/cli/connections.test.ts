import { describe, expect, it } from 'vitest';
import { CLI_REDIS_OPTIONS } from '../../src/cli/redis-client.js';
import { freePort, startRedis } from '../redis/support/redis-server.js';
import { requireService } from '../support/services.js';
import { expectCleanFailure, oncely, serveDemo } from './support/cli.js';

describe('CLI connections: bad URLs and unreachable stores get one clear line', () => {
  it('a malformed DATABASE_URL or REDIS_URL is a usage error that says what is wrong (exit 2)', async () => {
    for (const command of [
      ['stats', '--store', 'postgres'],
      ['migrate'],
      ['outbox', 'stats'],
      ['demo', '--store', 'postgres'],
    ]) {
      const result = await oncely(command, { DATABASE_URL: 'not-a-url' });
      expectCleanFailure(result, 2, /DATABASE_URL is not a URL: "not-a-url"; give a URL like postgres:\/\//);
      expect(result.stderr).not.toMatch(/ENOTFOUND|base/);
    }
    const scheme = await oncely(['migrate'], { DATABASE_URL: 'mysql://app:s3cret@db/app' });
    expectCleanFailure(scheme, 2, /DATABASE_URL has the scheme "mysql:" in "mysql:\/\/app:\*\*\*@db\/app"/);
    expect(scheme.stderr).not.toContain('s3cret');
    for (const command of [
      ['stats', '--store', 'redis'],
      ['demo', '--store', 'redis'],
    ]) {
      expectCleanFailure(
        await oncely(command, { REDIS_URL: 'not-a-url' }),
        2,
        /REDIS_URL is not a URL: "not-a-url"; give a URL like redis:\/\/127.0.0.1:6379 \(redis:\/\/, rediss:\/\/\)/,
      );
    }
    expectCleanFailure(
      await oncely(['stats', '--store', 'redis'], { REDIS_URL: 'http://127.0.0.1:6379' }),
      2,
      /REDIS_URL has the scheme "http:"/,
    );
  });

  it('an empty DATABASE_URL means the documented localhost default, as unset does', async () => {
    const result = await oncely(['stats', '--store', 'postgres', '--schema', 'oncely_cli_never_made'], {
      DATABASE_URL: '',
    });
    // Either the default database answers (no such table) or it is down here; both name the default URL.
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/postgres:\/\/postgres@127\.0\.0\.1:5432\/test/);
  });

  it('an unreachable PostgreSQL or Redis fails with exit 1 and no driver noise', async () => {
    const port = await freePort();
    expectCleanFailure(
      await oncely(['stats', '--store', 'postgres'], {
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/test`,
      }),
      1,
      new RegExp(
        `cannot connect to PostgreSQL at postgres://postgres@127.0.0.1:${port}/test \\(connect ECONNREFUSED`,
      ),
    );
    for (const command of [
      ['stats', '--store', 'redis'],
      ['inspect', '--store', 'redis', '--hashed', 'x'],
      ['demo', '--store', 'redis'],
    ]) {
      // What starting the CLI costs right now (it swings with the machine's load), measured beside each run.
      const bare = Date.now();
      await oncely(['--version'], {});
      const startup = Date.now() - bare;
      const started = Date.now();
      const result = await oncely(command, { REDIS_URL: `redis://127.0.0.1:${port}` });
      // ioredis arms a 2 s timer when a failed client is disconnected; the CLI must not wait it out.
      expect(Date.now() - started - startup, command.join(' ')).toBeLessThan(1_500);
      // One line: no "[ioredis] Unhandled error event" stack before it.
      expectCleanFailure(
        result,
        1,
        new RegExp(
          `cannot connect to Redis at redis://127.0.0.1:${port} \\(connect ECONNREFUSED 127.0.0.1:${port}\\); check REDIS_URL`,
        ),
      );
    }
    const secret = await oncely(['stats', '--store', 'redis'], {
      REDIS_URL: `redis://:hunter2@127.0.0.1:${port}`,
    });
    expectCleanFailure(secret, 1, new RegExp(`Redis at redis://:\\*\\*\\*@127.0.0.1:${port} `));
  });

  it('Redis lost under demo --serve: 503 to clients, one line on stderr, no ioredis stacks', async () => {
    await requireService('redis');
    const redis = await startRedis();
    const demo = await serveDemo(['--store', 'redis'], { REDIS_URL: `redis://127.0.0.1:${redis.port}` });
    try {
      const pay = (key: string) =>
        fetch(`${demo.url}/payments`, {
          method: 'POST',
          headers: { 'idempotency-key': key, 'content-type': 'application/json' },
          body: '{"amount": 1999, "currency": "EUR"}',
        });
      expect((await pay('before')).status).toBe(201);
      await redis.kill();
      // ioredis retries in the background; give it a few failed reconnects to (not) complain about.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const during = await pay('during');
      expect(during.status).toBe(503);
      expect(during.headers.get('content-type')).toMatch(/problem\+json/);
      const stderr = demo.stderr();
      expect(stderr).not.toMatch(/\[ioredis\]|Unhandled|\n\s+at /);
      // The CLI's own line, and at most the library's once-a-minute account of why requests get 503; no more.
      const lines = stderr.trimEnd().split('\n');
      expect(lines[0]).toMatch(
        new RegExp(`^oncely: lost Redis at redis://127.0.0.1:${redis.port} \\(.+\\); reconnecting$`),
      );
      expect(lines.length).toBeLessThanOrEqual(2);
      if (lines[1] !== undefined) {
        expect(lines[1]).toMatch(/^oncely\/node: the idempotency store failed: .*503/);
        expect(lines[1]).not.toMatch(/[.?!]\./); // "is its address right?." (issue 23)
      }
    } finally {
      await demo.stop();
      await redis.kill();
    }
  });

  it("the CLI's own Redis client keeps the offline queue off and resends nothing, as docs/stores/redis.md advises", () => {
    expect(CLI_REDIS_OPTIONS).toMatchObject({ enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  });
});
