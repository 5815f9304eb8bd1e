// `oncely … | head`: when the reader of stdout goes away, the CLI ends quietly with exit 0, as Unix tools do, instead
// of an unhandled EPIPE stack trace. The pipe is real: a FIFO whose only reader is closed before the CLI starts,
// so every write the CLI makes meets EPIPE (no race with how fast a reader would exit).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate as migrateOutbox } from '../../src/messaging/outbox/index.js';
import { migrate as migrateKeys } from '../../src/stores/postgres/migrate.js';
import { requireService, services } from '../support/services.js';
import { cliPath } from './support/cli.js';

let dir: string;
let pool: pg.Pool;
// A schema of the test's own, so the commands that read PostgreSQL find their tables.
const schema = `oncely_pipe_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  await requireService('postgres');
  dir = await mkdtemp(join(tmpdir(), 'oncely-pipe-'));
  pool = new pg.Pool({ connectionString: services.postgres.url, max: 2 });
  await migrateKeys(pool, { schema });
  await migrateOutbox(pool, { schema });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool?.end();
});

/** Runs the CLI with stdout on a pipe that has no reader; resolves with its exit code and stderr. */
function intoClosedPipe(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  const fifo = join(dir, `fifo-${Math.random().toString(36).slice(2)}`);
  // fd 4 opens the FIFO read-write (so opening the write end does not block), fd 5 is the CLI's stdout; closing
  // fd 4 leaves the pipe with no reader at all. "$@" passes the arguments without the shell reading them.
  const script = `mkfifo "$FIFO" && exec 4<>"$FIFO" 5>"$FIFO" && exec 4<&- && rm "$FIFO" && exec "$NODE" "$CLI" "$@" >&5`;
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script, 'bash', ...args],
      {
        env: {
          ...process.env,
          FIFO: fifo,
          NODE: process.execPath,
          CLI: cliPath,
          DATABASE_URL: services.postgres.url,
          REDIS_URL: services.redis.url,
        },
        timeout: 30_000,
      },
      (error, _stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stderr });
      },
    );
  });
}

describe('stdout closed early', () => {
  it('help, --version and a command that writes after connecting end with exit 0 and nothing on stderr', async () => {
    const runs = [
      ['help'],
      ['--version'],
      ['inspect', '--help'],
      ['estimate', '--rps', '200'],
      ['migrate', '--print'],
      ['outbox', 'stats', '--schema', schema],
      ['inspect', '--store', 'postgres', '--schema', schema, '--hashed', 'no-such-key'],
    ];
    for (const args of runs) {
      const result = await intoClosedPipe(args);
      expect({ args, ...result }).toEqual({ args, code: 0, stderr: '' });
    }
  });

  it('a failure is still reported on stderr with its exit code', async () => {
    const result = await intoClosedPipe(['inspect']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^oncely: inspect: give --store redis or --store postgres/);
  });
});
