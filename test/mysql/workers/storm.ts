/**
 * A storm worker: one process with its own pool and MySqlStore, driven line by line over stdin (see
 * storm.test.ts). `begin` fires every contender at once and reports what each got; `settle <release|complete>`
 * then releases or completes what this process acquired (its body names the process by pid), so the next storm
 * finds the keys in that state.
 */
import { createInterface } from 'node:readline';
import { MySqlStore } from '../../../src/stores/mysql/index.js';
import { createPool, type DriverName, type Isolation, query } from '../support.js';

interface Config {
  readonly driver: DriverName;
  readonly isolation: Isolation;
  readonly table: string;
  readonly keys: readonly string[];
  readonly contenders: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as Config;
const pool = createPool(config.driver, { isolation: config.isolation, size: 4 });
const store = new MySqlStore({ pool, table: config.table });
const held = new Map<string, number>();
const write = (value: unknown) =>
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);

async function storm() {
  const results = await Promise.all(
    config.keys.flatMap((key) =>
      Array.from({ length: config.contenders }, async () => {
        try {
          const result = await store.begin({
            key,
            fingerprint: 'storm',
            leaseMs: 60_000,
            retentionMs: 600_000,
          });
          if (result.kind === 'acquired') held.set(key, result.token);
          return {
            key,
            worker: process.pid,
            kind: result.kind,
            ...(result.kind === 'acquired' ? { token: result.token, attempt: result.attempt } : {}),
            ...(result.kind === 'replay' ? { body: Buffer.from(result.outcome.body).toString('utf8') } : {}),
          };
        } catch (error) {
          return { key, kind: 'error', error: String(error) };
        }
      }),
    ),
  );
  write(results);
}

async function settle(action: string) {
  for (const [key, token] of held) {
    const body = Buffer.from(`worker ${process.pid} for ${key}`);
    const outcome = {
      status: 201,
      headers: [] as const,
      body,
      encoding: 'identity',
      storage: 'inline',
    } as const;
    const result =
      action === 'release'
        ? await store.release({ key, token })
        : await store.complete({ key, token, outcome, retentionMs: 600_000 });
    if (result.kind !== 'ok') write(`fenced ${key}`);
  }
  held.clear();
  write('settled');
}

await query(pool, 'SELECT 1');
write('ready');
for await (const line of createInterface({ input: process.stdin })) {
  const [command, argument] = line.split(' ');
  if (command === 'begin') await storm();
  else if (command === 'settle') await settle(argument ?? 'release');
  else break;
}
await pool.end();
