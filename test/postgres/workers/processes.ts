import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const payWorker = new URL('./pay.ts', import.meta.url).pathname;

/** Child processes running workers/pay.ts (or another worker script), driven line by line over stdin/stdout. */
export class PayProcesses {
  readonly children: ChildProcess[];
  readonly #lines: AsyncIterator<string>[];

  constructor(count: number, config: object, worker = payWorker) {
    this.children = Array.from({ length: count }, () =>
      spawn(process.execPath, ['--import', 'tsx', worker, JSON.stringify(config)], {
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    );
    this.#lines = this.children.map((child) =>
      createInterface({ input: child.stdout! })[Symbol.asyncIterator](),
    );
  }

  /** The next line of every child (or of the one at `index`). */
  async read(index?: number): Promise<string[]> {
    const lines = index === undefined ? this.#lines : [this.#lines[index]!];
    return (await Promise.all(lines.map((l) => l.next()))).map((l) => String(l.value));
  }

  send(command: string, index?: number): void {
    const children = index === undefined ? this.children : [this.children[index]!];
    for (const child of children) child.stdin!.write(`${command}\n`);
  }

  async stop(): Promise<void> {
    const running = this.children.filter((child) => child.exitCode === null && child.signalCode === null);
    const exits = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of running) child.stdin!.end('exit\n');
    await Promise.all(exits);
  }
}
