// The orchestrator's side of the worker processes (relays, consumers): spawn one through tsx with its config,
// wait until it says `ready`, keep its last `progress`, ask it for its `status`, stop it gracefully (stdin end)
// or SIGKILL it. Its stderr goes to a log file of its own under the run's directory.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

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
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL(`./${file}`, import.meta.url)), JSON.stringify(config)],
    { cwd: ROOT, stdio: ['pipe', 'pipe', log] },
  );
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
    sleep(60_000).then(() => {
      throw new Error(`${name} was not ready within 60 s`);
    }),
  ]);
  (worker as { pid: number }).pid = pid;
  return worker;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
