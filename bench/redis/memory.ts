import { RedisStore } from '../../src/stores/redis/index.js';
import { type Bench, engineKey, jsonBody, newEngine } from './fixtures.js';
import { median } from './report.js';

export interface MemoryRow {
  readonly case: string;
  readonly rawBodyBytes: number;
  /** The body as stored (brotli above 1 KiB, by the engine's `sealOutcome`). */
  readonly storedBodyBytes: number;
  /** MEMORY USAGE of the whole record (key, fields, body, Redis overhead), median over the sample. */
  readonly recordBytes: number;
  readonly encoding: string;
}

const SAMPLE = 200;

/** MEMORY USAGE per completed record for a 200-byte and a 10 KiB JSON body, through the Engine. */
export async function measureMemory(bench: Bench): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  const defaultListpack = await bench.admin.config('GET', 'hash-max-listpack-value');
  for (const [label, listpackValue] of [
    ['default config', undefined],
    ['hash-max-listpack-value 1024', '1024'],
  ] as const) {
    if (listpackValue !== undefined)
      await bench.admin.config('SET', 'hash-max-listpack-value', listpackValue);
    for (const size of [200, 1024, 4096, 10 * 1024])
      rows.push(await measure(bench, `${size} B JSON, ${label}`, size));
    rows.push(await measureInProgress(bench, `in progress (no body), ${label}`));
  }
  await bench.admin.config('SET', 'hash-max-listpack-value', String(defaultListpack[1]));
  return rows;
}

async function measure(bench: Bench, name: string, size: number): Promise<MemoryRow> {
  const store = new RedisStore({
    client: bench.client,
    prefix: `mem${size}-${Math.random().toString(36).slice(2, 6)}`,
  });
  const engine = newEngine(store);
  const records: number[] = [];
  const bodies: number[] = [];
  let encoding = '';
  for (let i = 0; i < SAMPLE; i++) {
    const key = engineKey(`${name}-${i}`);
    const body = jsonBody(size, 1_000 + i);
    await engine.execute({
      key,
      fingerprint: 'f',
      run: async () => body,
      settle: (result) => ({
        keep: true,
        outcome: { status: 201, headers: [['content-type', 'application/json']], body: result },
      }),
    });
    const recordKey = store.keys.record(key);
    records.push(Number(await bench.admin.memory('USAGE', recordKey, 'SAMPLES', '0')));
    bodies.push(await bench.admin.hstrlen(recordKey, 'b'));
    encoding = String(await bench.admin.object('ENCODING', recordKey));
  }
  return {
    case: name,
    rawBodyBytes: size,
    storedBodyBytes: median(bodies),
    recordBytes: median(records),
    encoding,
  };
}

async function measureInProgress(bench: Bench, name: string): Promise<MemoryRow> {
  const store = new RedisStore({
    client: bench.client,
    prefix: `memp-${Math.random().toString(36).slice(2, 6)}`,
  });
  const records: number[] = [];
  let encoding = '';
  for (let i = 0; i < SAMPLE; i++) {
    const key = engineKey(`${name}-${i}`);
    await store.begin({ key, fingerprint: engineKey('fingerprint'), leaseMs: 30_000, retentionMs: 600_000 });
    records.push(Number(await bench.admin.memory('USAGE', store.keys.record(key), 'SAMPLES', '0')));
    encoding = String(await bench.admin.object('ENCODING', store.keys.record(key)));
  }
  return { case: name, rawBodyBytes: 0, storedBodyBytes: 0, recordBytes: median(records), encoding };
}
