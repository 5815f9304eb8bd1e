/**
 * @module Disposable redis-servers for tests, benchmarks and the proof: one started on a free port per caller,
 * killed, paused or restarted on purpose, and the store client the docs recommend. The one place that spawns
 * `redis-server` (test/redis/support/disposable.ts wraps it in vitest hooks; cluster.ts and sentinel.ts build on it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../support/free-port.js';

export { freePort };

export interface RedisProcess {
  readonly port: number;
  readonly dir: string;
  /** The redis-server running now (after `restart`, the new one). */
  readonly process: ChildProcess;
  /** SIGKILL, as a crash: no shutdown, no save. Resolves once the process is gone; a no-op when it is. */
  kill(): Promise<void>;
  /** Kills the server if it runs, then starts it again on the same port and directory: empty (no persistence). */
  restart(): Promise<void>;
  /** SIGSTOP: the server stops answering but keeps its sockets open (a hung or partitioned server). */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
}

/** Starts `redis-server` (or `redis-server --sentinel` with `sentinelConfig`) in the foreground and waits for PING. */
export async function startRedis(
  options: { port?: number; dir?: string; args?: readonly string[]; sentinelConfig?: string } = {},
): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'oncely-redis-'));
  const args = options.sentinelConfig
    ? [options.sentinelConfig, '--sentinel', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir]
    : ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  const argv = [...args, ...(options.args ?? [])];
  let running = await spawnRedis(port, argv);
  const kill = async () => {
    const { child, exited } = running;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return {
    port,
    dir,
    get process() {
      return running.child;
    },
    kill,
    async restart() {
      await kill();
      running = await spawnRedis(port, argv);
    },
    pause: () => running.child.kill('SIGSTOP'),
    resume: () => running.child.kill('SIGCONT'),
  };
}

async function spawnRedis(
  port: number,
  args: readonly string[],
): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPing(
    port,
    () => child.exitCode !== null,
    () => stderr,
  );
  return { child, exited };
}

/**
 * The client a store gets, with the options docs/stores/redis.md recommends: fail fast, no offline queue. With
 * `reconnectMs`, it reconnects that often and its errors are swallowed, for tests that kill the server on purpose.
 * Resolves once the client is ready.
 */
export async function storeClient(port: number, options: { reconnectMs?: number } = {}): Promise<Redis> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    ...(options.reconnectMs === undefined ? {} : { retryStrategy: () => options.reconnectMs }),
  });
  if (options.reconnectMs !== undefined) client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

async function waitForPing(port: number, died: () => boolean, stderr: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (died()) throw new Error(`redis-server on port ${port} exited: ${stderr()}`);
    const probe = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    probe.on('error', () => {});
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not listening yet
    } finally {
      probe.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`redis-server on port ${port} did not answer PING`);
}

/** Kills every process and removes their directories. */
export async function stopAll(processes: ReadonlyArray<RedisProcess | undefined>): Promise<void> {
  await Promise.all(processes.map((p) => p?.kill()));
  for (const p of processes) if (p) rmSync(p.dir, { recursive: true, force: true });
}
