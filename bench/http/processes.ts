import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ClientName } from '../../test/redis/support/clients.js';

export type Framework = 'express' | 'fastify' | 'hono' | 'node';
export type Variant =
  | 'baseline'
  | 'oncely'
  | 'oncely-cache'
  | 'oncely-memory'
  | 'oncely-otel'
  | 'oncely-sdk'
  | 'oncely-otel-sdk'
  | 'minimal'
  | 'express-idempotency'
  | 'node-idempotency';

export interface ServerProcess {
  readonly framework: Framework;
  readonly variant: Variant;
  /** The library the store's own client is made with; undefined: the store shares the handler's ioredis client. */
  readonly client?: ClientName | undefined;
  readonly pid: number;
  readonly url: string;
  stop(): Promise<void>;
}

const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));

/** Starts `server.ts` in its own process, so its CPU time can be read from /proc apart from the load generator's. */
export async function startServer(
  framework: Framework,
  variant: Variant,
  redisPort: number,
  /** Node flags for the server process (`--cpu-prof`, which NODE_OPTIONS refuses). */
  nodeFlags: readonly string[] = [],
  /** The store on a client of its own, of this library (bench/http/clients.ts); the oncely variants only. */
  client?: ClientName,
): Promise<ServerProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...nodeFlags,
      '--import',
      'tsx',
      SERVER,
      framework,
      variant,
      String(redisPort),
      ...(client === undefined ? [] : [client]),
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) =>
      reject(new Error(`${framework}/${variant}${client ? `/${client}` : ''} server exited with ${code}`)),
    );
  });
  const { port } = JSON.parse(line) as { port: number };
  return {
    framework,
    variant,
    client,
    pid: child.pid!,
    url: `http://127.0.0.1:${port}/payments`,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.stdin!.end();
      }),
  };
}

// Clock ticks per second for /proc/<pid>/stat (getconf CLK_TCK; 100 on Linux).
const TICKS_PER_SECOND = 100;

/** User + system CPU time a process used so far, in microseconds (fields 14 and 15 of /proc/<pid>/stat). */
export function processCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; everything after its closing parenthesis is space-separated.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) / TICKS_PER_SECOND) * 1_000_000;
}

/** CPU the redis-server used so far (INFO CPU: used_cpu_user + used_cpu_sys), in microseconds. */
export function redisCpuMicros(info: string): number {
  const read = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return (read('used_cpu_user') + read('used_cpu_sys')) * 1_000_000;
}
