// The worker side of the orchestrator's protocol: the config is the first argument (JSON); the worker prints JSON
// lines (`ready`, `progress`, `status`, `caught`) on stdout and reads commands, one per line, on stdin:
// - `status`: answered with the worker's status;
// - `arm`: the next time the worker is at the instant a fault should hit (a relay with part of its batch confirmed
//   by the broker and unmarked, a consumer with an effect written and not committed) it holds there and prints
//   `caught`, so the orchestrator's SIGKILL lands exactly mid-batch or mid-handler.
// Closing stdin asks it to stop gracefully; before it serves (still starting), it just exits. (For the relay and
// consumer processes; the producer talks over IPC.)
import { createInterface } from 'node:readline';

export function workerConfig<T>(): T {
  return JSON.parse(process.argv[2] ?? '{}') as T;
}

export const emit = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`);
// The orchestrator is gone (its end of the pipe closed): nothing to report to, nothing to do.
process.stdout.on('error', () => process.exit(0));

let onLine = (_line: string) => {};
let onClose: () => void = () => process.exit(0);
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => onLine(line.trim()));
lines.once('close', () => onClose());

/** CPU time of this process so far (user + system), in ms. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return Math.round((user + system) / 1_000);
}

/** Holds forever: the caller is about to be SIGKILLed. */
export const hold = () => new Promise<never>(() => {});

export interface Trap {
  /** True once after `arm`: the caller is at the instant to be caught; it reports `caught` and holds. */
  spring(status: object): boolean;
}

/** Answers `status` with `status()`, arms the trap on `arm`, and calls `stop` once stdin ends. */
export function serve(status: () => object, stop: () => Promise<void>): Trap {
  let armed = false;
  onLine = (command) => {
    if (command === 'status') emit({ type: 'status', ...status() });
    else if (command === 'arm') armed = true;
  };
  onClose = () => {
    // A graceful stop that hangs (a broker that never answers) must not leave the process behind.
    setTimeout(() => process.exit(1), 20_000).unref();
    void stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`stop failed: ${error}\n`);
        process.exit(1);
      },
    );
  };
  return {
    spring(caught) {
      if (!armed) return false;
      armed = false;
      emit({ type: 'caught', ...caught });
      return true;
    },
  };
}
