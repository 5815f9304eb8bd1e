import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/free-port.js';
import { services } from '../support/services.js';
import { systemTool } from '../support/system-tool.js';

export interface PgBouncer {
  readonly url: string;
  stop(): Promise<void>;
}

const BINARY = '/usr/sbin/pgbouncer';

/** True when PgBouncer is installed; otherwise skipped outside CI with the install command, failed under CI. */
export const pgbouncerInstalled = (): boolean =>
  systemTool('pgbouncer', [BINARY, '--version'], 'apt-get install -y pgbouncer');

/**
 * Starts a PgBouncer of the test's own in transaction-pooling mode on a free port, in front of the machine's
 * PostgreSQL, with `poolSize` server connections; `stop` shuts it down and removes its directory.
 */
export async function startPgBouncer(poolSize: number): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-pgbouncer-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const { host, port: pgPort } = services.postgres;
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(
    config,
    `[databases]
test = host=${host} port=${pgPort} dbname=test user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = ${poolSize}
max_client_conn = 1000
ignore_startup_parameters = extra_float_digits,options
logfile = ${join(dir, 'pgbouncer.log')}
`,
  );
  // PgBouncer refuses to run as root; -u drops to the postgres user when the tests run as root.
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(BINARY, asRoot ? ['-u', 'postgres', config] : [config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  await waitForPort(port, child, () => `${stderr}\n${safeRead(join(dir, 'pgbouncer.log'))}`);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const { connect } = await import('node:net');
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pgbouncer did not listen on ${port}: ${log()}`);
}
