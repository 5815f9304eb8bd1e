import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface Worker {
  readonly child: ChildProcess;
  /** Every JSON line the worker printed so far. */
  readonly events: Record<string, unknown>[];
  /** Resolves with the first event (already seen or coming) that matches. */
  waitFor(
    match: (event: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Sends `signal` and resolves once the process exited. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** Starts `test/messaging/workers/<name>.ts` in its own Node process with `config` in ONCELY_WORKER. */
export function startWorker(name: string, config: object): Worker {
  const path = fileURLToPath(new URL(`../workers/${name}.ts`, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', path], {
    env: { ...process.env, ONCELY_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const events: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      events.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      events.push({ type: 'text', line });
    }
    for (const wake of [...waiters]) wake();
  });
  return {
    child,
    events,
    waitFor(match, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(match);
          if (found === undefined) return false;
          done();
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`worker ${name} did not report the expected event within ${timeoutMs} ms`));
        }, timeoutMs);
        const onExit = () => {
          if (!check()) {
            done();
            reject(
              new Error(
                `worker ${name} exited (${child.exitCode ?? child.signalCode}) before the expected event`,
              ),
            );
          }
        };
        const done = () => {
          clearTimeout(timer);
          waiters.delete(wake);
          child.off('exit', onExit);
        };
        const wake = () => void check();
        if (check()) return;
        waiters.add(wake);
        child.once('exit', onExit);
      });
    },
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/**
 * The crash a multi-process consumer test stages: a victim consumer (`config` plus `victim`) runs alone until it
 * stalls in a handler (a consumer started beside it could drain the queue first), a steady consumer joins, the
 * victim is SIGKILLed, and a replacement starts. Every process goes into `workers`, for the file's cleanup; the
 * two left running are returned.
 */
export async function crashOneConsumer(
  workers: Worker[],
  config: object,
  victim: { readonly stallAt: number; readonly prefetch: number },
): Promise<{ readonly steady: Worker; readonly replacement: Worker }> {
  const stalled = startWorker('consumer', { ...config, ...victim });
  workers.push(stalled);
  await stalled.waitFor((e) => e.type === 'stalled');
  const steady = startWorker('consumer', config);
  workers.push(steady);
  await stalled.kill('SIGKILL');
  const replacement = startWorker('consumer', config);
  workers.push(replacement);
  return { steady, replacement };
}

/** For workers: print one event as a JSON line. */
export const report = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`);
