/**
 * @module The Next.js app (next-app/) as a user ships it: copied to a scratch folder inside the repository (git
 * ignores .tmp/; inside, so node_modules and the package's own name resolve upward, as Turbopack requires), built
 * with `next build`, served by `next start` on a loopback port. A build or start that fails, fails the test with
 * Next.js's own output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../support/free-port.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const appSource = fileURLToPath(new URL('./next-app/', import.meta.url));
const nextBin = join(repoRoot, 'node_modules/next/dist/bin/next');

export interface BuiltApp {
  readonly dir: string;
  remove(): Promise<void>;
}

export interface NextServer {
  readonly port: number;
  readonly baseUrl: string;
  stop(): Promise<void>;
}

/** A fresh copy of the app, built (its own copy: runs in parallel never share a `.next`). */
export async function buildNextApp(): Promise<BuiltApp> {
  const dir = join(repoRoot, '.tmp', `nextjs-${process.pid}-${Date.now()}`);
  await cp(appSource, dir, {
    recursive: true,
    filter: (path) => !/[/\\](\.next|node_modules)([/\\]|$)/.test(path.slice(appSource.length - 1)),
  });
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    const { code, output } = await run(spawn(process.execPath, [nextBin, 'build'], options(dir, {})));
    if (code !== 0) throw new Error(`next build failed (exit ${code}):\n${output}`);
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, remove };
}

/** `next start` on the built app; resolves once it answers. */
export async function startNextServer(dir: string, env: Record<string, string>): Promise<NextServer> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [nextBin, 'start', '--port', String(port), '--hostname', '127.0.0.1'],
    // Its own process group, so stop() ends whatever next start forked, by the group's id.
    { ...options(dir, env), detached: true },
  );
  const ended = run(child);
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const exited = await Promise.race([ended, new Promise<undefined>((r) => setTimeout(r, 100))]);
    if (exited !== undefined) throw new Error(`next start exited (${exited.code}):\n${exited.output}`);
    if (await answers(baseUrl)) break;
    if (Date.now() > deadline) {
      stopGroup(child, 'SIGKILL');
      throw new Error(`next start did not answer within 30 s:\n${(await ended).output}`);
    }
  }
  return {
    port,
    baseUrl,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      stopGroup(child, 'SIGTERM');
      const timer = setTimeout(() => stopGroup(child, 'SIGKILL'), 5_000);
      await ended;
      clearTimeout(timer);
    },
  };
}

function options(dir: string, env: Record<string, string>) {
  return {
    cwd: dir,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
  };
}

/** The child's exit code and everything it printed. */
function run(child: ChildProcess): Promise<{ code: number | null; output: string }> {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

async function answers(baseUrl: string): Promise<boolean> {
  try {
    await fetch(`${baseUrl}/harness/apps`, { method: 'HEAD' });
    return true;
  } catch {
    return false;
  }
}

function stopGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Gone already.
  }
}
