// The orchestrator's side of the producer process (proof/messaging/producer.ts).
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess } from './children.js';

/** The producer process: commits as it gets credit (IPC), reports `{ committed, rolledBack }`. */
export async function startProducer(config: object, logDir: string) {
  const log = openSync(join(logDir, `producer-${Date.now()}.log`), 'a');
  const child: ChildProcess = await startProcess('producer.ts', config, ['ignore', 'ignore', log, 'ipc']);
  closeSync(log);
  // A message sent just as the producer exits fails with EPIPE; the exit is what counts, so that is ignored.
  child.on('error', () => {});
  const send = (message: object) => {
    if (child.connected) child.send(message, () => {});
  };
  const state = { committed: 0, rolledBack: 0, cpuMs: 0 };
  child.on('message', (message: { committed: number; rolledBack: number; cpuMs: number }) =>
    Object.assign(state, message),
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ready = new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    void exited.then((code) => reject(new Error(`the producer exited (${code}) before it was ready`)));
  });
  return {
    ready,
    state,
    exited,
    credit: (credit: number) => send({ credit }),
    stop: () => send({ stop: true }),
    kill: () => child.kill('SIGKILL'),
  };
}
