/**
 * @module A test server in another runtime (Bun, Deno): started as a child process from the repository root, ready
 * once it prints `listening <port>`; a server that exits or stays silent fails the test with its own output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export interface RuntimeServer {
  readonly port: number;
  readonly baseUrl: string;
  stop(): Promise<void>;
}

export function startRuntimeServer(
  name: string,
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<RuntimeServer> {
  const child = spawn(command, args, {
    cwd: repoRoot,
    // Plain text: the output goes into the test's error message when the server does not start.
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const said = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  child.stdout!.on('data', said);
  child.stderr!.on('data', said);
  return new Promise<RuntimeServer>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start (${command} ${args.join(' ')}): ${why}\n${output}`));
    };
    const timer = setTimeout(() => fail(`no "listening <port>" within ${timeoutMs} ms`), timeoutMs);
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code, signal) => fail(`it exited (code ${code}, signal ${signal})`));
    child.stdout!.on('data', () => {
      const port = /listening (\d+)/.exec(output)?.[1];
      if (port === undefined) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        port: Number(port),
        baseUrl: `http://127.0.0.1:${port}`,
        stop: () => stopped(child),
      });
    });
  });
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
