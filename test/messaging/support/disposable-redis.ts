import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server of this test's own (no persistence), which the test may kill and start again on its port. */
export class DisposableRedis {
  #process: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  static async start(): Promise<DisposableRedis> {
    const redis = new DisposableRedis(await freePort());
    await redis.start();
    return redis;
  }

  async start(): Promise<void> {
    this.#process = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    const probe = new Redis({
      port: this.port,
      lazyConnect: true,
      retryStrategy: () => 50,
      maxRetriesPerRequest: null,
    });
    probe.on('error', () => {});
    try {
      await probe.connect().catch(() => {});
      await probe.ping();
    } finally {
      probe.disconnect();
    }
  }

  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
