import { execFile, spawn } from 'node:child_process';
import { expect, vi } from 'vitest';
import { services } from '../../support/services.js';

export const cliPath = new URL('../../../dist/cli/main.js', import.meta.url).pathname;

/**
 * Node's arguments that run the CLI from its sources (main.ts through tsx), for the CLI's code newer than the last
 * build (`npm run build` makes dist/): `oncely(args, env, timeoutMs, sourceCli)`.
 */
export const sourceCli: readonly string[] = [
  '--import',
  'tsx',
  new URL('../../../src/cli/main.ts', import.meta.url).pathname,
];

/**
 * Node's arguments that make `names` (and their subpaths) unresolvable in a child process, as if not installed
 * (hide-packages.mjs): what a user without an optional peer sees, with nothing uninstalled. They go before the
 * entry: `oncely(args, env, timeoutMs, [...hidingPackages(['pg']), ...sourceCli])`.
 */
export function hidingPackages(names: readonly string[]): string[] {
  const hooks = new URL('./hide-packages.mjs', import.meta.url).href;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks)}, { data: ${JSON.stringify(names)} });`;
  return ['--import', `data:text/javascript,${encodeURIComponent(register)}`];
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The test process's environment with the test services' URLs and `env` over it; undefined removes a variable. */
function childEnv(env: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv {
  const merged: Record<string, string | undefined> = {
    ...process.env,
    REDIS_URL: services.redis.url,
    DATABASE_URL: services.postgres.url,
    ...env,
  };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  return merged as NodeJS.ProcessEnv;
}

/**
 * Runs the built CLI as a user does (`node dist/cli/main.js …`; `entry` = `sourceCli` runs its sources) and
 * resolves with its exit code and output, whatever the code. REDIS_URL and DATABASE_URL point at the test services
 * unless `env` says otherwise; a variable set to undefined in `env` is removed.
 */
export function oncely(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
  timeoutMs = 30_000,
  entry: readonly string[] = [cliPath],
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...entry, ...args],
      { env: childEnv(env), timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * A failure as the CLI promises it: the expected exit code and one message line matching `message`, with no
 * stack trace, no "unexpected error" and no driver noise (ioredis's "Unhandled error event").
 */
export function expectCleanFailure(result: CliResult, code: 1 | 2, message: RegExp): void {
  const shown = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect(result.code, shown).toBe(code);
  expect(result.stderr, shown).toMatch(message);
  expect(result.stderr, shown).toMatch(/^oncely: [^\n]+\n$/);
}

/**
 * What a command wrote to stdout, run in this process (where only its work is checked: each spawn costs seconds);
 * its failure rejects as it would reach main.ts.
 */
export async function command(
  run: (argv: readonly string[]) => Promise<void>,
  argv: readonly string[],
): Promise<string> {
  const written: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    await run(argv);
  } finally {
    spy.mockRestore();
  }
  return written.join('');
}

export interface ServingCli {
  /** The link the command printed, `#token=…` fragment included. */
  readonly url: URL;
  /** SIGTERM, then resolves once the process is gone. */
  stop(): Promise<void>;
}

/**
 * Starts a command that serves (`oncely dashboard …`) and resolves with the link it prints; rejects with its
 * stderr if it exits first. `entry` as for `oncely`.
 */
export async function serveCli(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
  entry: readonly string[] = [cliPath],
): Promise<ServingCli> {
  const child = spawn(process.execPath, [...entry, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv(env),
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /on (http:\/\/\S+)/.exec(stdout);
        if (match?.[1]) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
    });
    return { url: new URL(url), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface ServingDemo {
  readonly url: string;
  /** What the process wrote to stderr so far. */
  stderr(): string;
  /**
   * Resolves with the relay's "outbox relay published …" lines once `done` accepts them (rejects after 15 s, or if
   * the process exits first).
   */
  published(done: (lines: readonly string[]) => boolean): Promise<string[]>;
  /** SIGTERM, then resolves once the process is gone. */
  stop(): Promise<void>;
}

/** Starts `oncely demo --serve --port 0 …` and resolves with its URL once it prints the banner. */
export async function serveDemo(
  args: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<ServingDemo> {
  const child = spawn(process.execPath, [cliPath, 'demo', '--serve', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv(env),
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /on (http:\/\/[\d.]+:\d+)/.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`demo --serve exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    stderr: () => stderr,
    async published(done) {
      const lines = () => stdout.split('\n').filter((line) => line.startsWith('outbox relay published '));
      const deadline = Date.now() + 15_000;
      while (!done(lines())) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`demo --serve exited: ${stderr}`);
        if (Date.now() > deadline) throw new Error(`not published within 15 s; stdout:\n${stdout}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return lines();
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
