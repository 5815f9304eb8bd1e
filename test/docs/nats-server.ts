import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../redis/support/redis-server.js';

const BINARY = '/usr/sbin/nats-server';

/**
 * A JetStream server of the docs test's own, empty at every start. The blocks create a stream and a durable
 * consumer with fixed names: on the machine's shared server they would outlive the run, and a block that stopped
 * creating its consumer would still find the one an earlier run left behind.
 */
export class DisposableNats {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly storeDir: string,
  ) {}

  static async start(): Promise<DisposableNats> {
    const port = await freePort();
    const storeDir = mkdtempSync(join(tmpdir(), 'oncely-docs-nats-'));
    const child = spawn(BINARY, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
      stdio: 'ignore',
    });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error) =>
        reject(new Error(`cannot start ${BINARY} (${error.message}); .ci/run installs nats-server`)),
      );
    });
    await spawned;
    const server = new DisposableNats(`nats://127.0.0.1:${port}`, child, storeDir);
    for (let attempt = 0; !(await accepts(port)); attempt++) {
      if (attempt === 100 || child.exitCode !== null) {
        await server.stop();
        throw new Error(`${BINARY} did not accept connections on port ${port}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return server;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGKILL');
      await exited;
    }
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
