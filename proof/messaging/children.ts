// The orchestrator's side of the worker processes (relays, consumers): spawn one with its config, wait until it
// says `ready`, keep its last `progress`, ask it for its `status`, stop it gracefully (stdin end) or SIGKILL it.
// Its stderr goes to a log file of its own under the run's directory.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
// esbuild comes with tsx (and vitest); the proof uses it to bundle its workers, see below.
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const bundles = new Map<string, Promise<string>>();

/**
 * A worker's entry point bundled into one ES module (its packages left to node_modules), built once per
 * orchestrator process. Started through tsx instead, each worker spent its first seconds of CPU compiling the
 * library's sources; on a loaded 2-core machine, with a dozen workers starting and restarting, that ran to a
 * minute per start.
 */
function bundled(file: string): Promise<string> {
  let built = bundles.get(file);
  if (built === undefined) {
    const outfile = join(ROOT, '.tmp/proof/workers', String(process.pid), file.replace(/\.ts$/, '.mjs'));
    built = build({
      entryPoints: [fileURLToPath(new URL(`./${file}`, import.meta.url))],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'warning',
    }).then(() => outfile);
    bundles.set(file, built);
  }
  return built;
}

/** Starts `file` (a worker of this directory) with its config as argument. */
export async function startProcess(
  file: string,
  config: object,
  stdio: ['pipe' | 'ignore', 'pipe' | 'ignore', number, ...'ipc'[]],
): Promise<ChildProcess> {
  return spawn(process.execPath, [await bundled(file), JSON.stringify(config)], { cwd: ROOT, stdio });
}

export interface WorkerProcess<P> {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** The last progress report (counts since the process started). */
  progress: P | undefined;
  /** Set before the orchestrator kills or stops it: any other exit is a crash. */
  expectExit: boolean;
  readonly exited: Promise<string>;
  status(): Promise<Record<string, number>>;
  /** Arms the worker's trap (proof/messaging/worker-io.ts) and resolves with its `caught` report, or `{}` after `maxMs`. */
  arm(maxMs: number): Promise<Record<string, number>>;
  /** Graceful: stdin ends, the worker stops its relay or consumer and exits (SIGKILL after `timeoutMs`). */
  stop(timeoutMs: number): Promise<void>;
  kill(): Promise<void>;
}

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

export async function spawnWorker<P>(
  file: string,
  name: string,
  config: object,
  logDir: string,
): Promise<WorkerProcess<P>> {
  const log = openSync(join(logDir, `${name}-${Date.now()}.log`), 'a');
  const child = await startProcess(file, config, ['pipe', 'pipe', log]);
  closeSync(log);
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(String(code ?? signal))),
  );
  const statusWaiters: ((status: Record<string, number>) => void)[] = [];
  let caught: (report: Record<string, number>) => void = () => {};
  let ready: (pid: number) => void = () => {};
  const readyPid = new Promise<number>((resolve) => {
    ready = resolve;
  });
  const worker: WorkerProcess<P> = {
    name,
    pid: 0,
    child,
    progress: undefined,
    expectExit: false,
    exited,
    async status() {
      if (!isRunning(child)) return {};
      const answer = new Promise<Record<string, number>>((resolve) => statusWaiters.push(resolve));
      child.stdin!.write('status\n');
      return (await Promise.race([answer, sleep(1_000).then(() => ({}))])) as Record<string, number>;
    },
    async arm(maxMs) {
      if (!isRunning(child)) return {};
      const answer = new Promise<Record<string, number>>((resolve) => {
        caught = resolve;
      });
      child.stdin!.write('arm\n');
      return (await Promise.race([answer, sleep(maxMs).then(() => ({}))])) as Record<string, number>;
    },
    async stop(timeoutMs) {
      worker.expectExit = true;
      child.stdin!.end();
      await Promise.race([exited, sleep(timeoutMs)]);
      if (isRunning(child)) child.kill('SIGKILL');
      await exited;
    },
    async kill() {
      worker.expectExit = true;
      if (isRunning(child)) child.kill('SIGKILL');
      await exited;
    },
  };
  child.stdin!.on('error', () => {});
  child.on('error', () => {});
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let event: { type?: string; pid?: number } & Record<string, number>;
    try {
      event = JSON.parse(line);
    } catch {
      return;
    }
    if (event.type === 'ready') ready(event.pid!);
    else if (event.type === 'progress') worker.progress = event as unknown as P;
    else if (event.type === 'status') statusWaiters.shift()?.(event);
    else if (event.type === 'caught') caught(event);
  });
  const pid = await Promise.race([
    readyPid,
    exited.then((exit) => {
      throw new Error(`${name} exited (${exit}) before it was ready; see its log in ${logDir}`);
    }),
    sleep(120_000).then(() => {
      throw new Error(`${name} was not ready within 120 s`);
    }),
  ]);
  (worker as { pid: number }).pid = pid;
  return worker;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
