import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A port nobody listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface RedisProcess {
  readonly port: number;
  readonly dir: string;
  readonly process: ChildProcess;
  /** SIGKILL, as a crash: no shutdown, no save. Resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGSTOP: the server stops answering but keeps its sockets open (a hung or partitioned server). */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
}

/** Starts `redis-server` (or `redis-server --sentinel` with `sentinel: true`) in the foreground and waits for PING. */
export async function startRedis(
  options: { port?: number; dir?: string; args?: readonly string[]; sentinelConfig?: string } = {},
): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'oncely-redis-'));
  const args = options.sentinelConfig
    ? [options.sentinelConfig, '--sentinel', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir]
    : ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  const child = spawn('redis-server', [...args, ...(options.args ?? [])], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
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
  return {
    port,
    dir,
    process: child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
  };
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
