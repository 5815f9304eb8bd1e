import { readFileSync } from 'node:fs';
import { RedisStore } from '../../src/stores/redis/index.js';
import { type Bench, engineKey, jsonBody, newEngine } from './fixtures.js';
import { median } from './report.js';

export interface MemoryRow {
  readonly case: string;
  readonly rawBodyBytes: number;
  /** The body as stored (brotli above 1 KiB, by the engine's `sealOutcome`). */
  readonly storedBodyBytes: number;
  /** MEMORY USAGE of the whole record (key, value, Redis overhead), median over the sample. */
  readonly recordBytes: number;
  readonly encoding: string;
}

const SAMPLE = 200;
// The fingerprint the HTTP adapters make (SHA-256, base64url: 43 characters), and the one-letter one the
// earlier tables used.
const FINGERPRINTS = [
  ['43-character fingerprint', engineKey('fingerprint')],
  ["fingerprint 'f'", 'f'],
] as const;

/**
 * MEMORY USAGE per record on a default-configured Redis: in progress, and completed through the Engine with JSON
 * bodies of 200 B to 10 KiB; then the same records as oncely 0.1 wrote them (a HASH, by 0.1's own scripts).
 */
export async function measureMemory(bench: Bench): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  for (const [label, fingerprint] of FINGERPRINTS) {
    rows.push(await measureInProgress(bench, `in progress, ${label}`, fingerprint));
    for (const size of [200, 1024, 4096, 10 * 1024]) {
      rows.push(await measure(bench, `${size} B JSON, ${label}`, size, fingerprint));
    }
  }
  for (const size of [200, 1024, 10 * 1024]) {
    rows.push(await measureLegacy(bench, `oncely 0.1: ${size} B JSON, 43-character fingerprint`, size));
  }
  return rows;
}

async function measure(bench: Bench, name: string, size: number, fingerprint: string): Promise<MemoryRow> {
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
      fingerprint,
      run: async () => body,
      settle: (result) => ({
        keep: true,
        outcome: { status: 201, headers: [['content-type', 'application/json']], body: result },
      }),
    });
    const recordKey = store.keys.record(key);
    records.push(Number(await bench.admin.memory('USAGE', recordKey, 'SAMPLES', '0')));
    bodies.push((await store.get(key))?.outcome?.body.byteLength ?? 0);
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

async function measureInProgress(bench: Bench, name: string, fingerprint: string): Promise<MemoryRow> {
  const store = new RedisStore({
    client: bench.client,
    prefix: `memp-${Math.random().toString(36).slice(2, 6)}`,
  });
  const records: number[] = [];
  let encoding = '';
  for (let i = 0; i < SAMPLE; i++) {
    const key = engineKey(`${name}-${i}`);
    await store.begin({ key, fingerprint, leaseMs: 30_000, retentionMs: 600_000 });
    records.push(Number(await bench.admin.memory('USAGE', store.keys.record(key), 'SAMPLES', '0')));
    encoding = String(await bench.admin.object('ENCODING', store.keys.record(key)));
  }
  return { case: name, rawBodyBytes: 0, storedBodyBytes: 0, recordBytes: median(records), encoding };
}

const legacyLua = (name: string) =>
  readFileSync(new URL(`../../test/redis/fixtures/oncely-0.1/${name}.lua`, import.meta.url), 'utf8');

/** A completed record as oncely 0.1 stored it (the body brotli-compressed from 1 KiB, as its engine did). */
async function measureLegacy(bench: Bench, name: string, size: number): Promise<MemoryRow> {
  const store = new RedisStore({ client: bench.client, prefix: 'sizing' });
  const engine = newEngine(store);
  const records: number[] = [];
  let stored = 0;
  let encoding = '';
  for (let i = 0; i < SAMPLE; i++) {
    // The engine seals the outcome as 0.1's did; only the layout differs.
    const key = engineKey(`${name}-${i}`);
    await engine.execute({
      key,
      fingerprint: 'f',
      run: async () => jsonBody(size, 1_000 + i),
      settle: (result) => ({ keep: true, outcome: { status: 201, headers: [], body: result } }),
    });
    const outcome = (await store.get(key))!.outcome!;
    stored = outcome.body.byteLength;
    const recordKey = `legacy:{${key}}`;
    const fingerprint = engineKey('fingerprint');
    const [, token] = (await bench.admin.eval(
      legacyLua('begin-1'),
      1,
      recordKey,
      fingerprint,
      30_000,
      600_000,
      '',
    )) as number[];
    await bench.admin.eval(
      legacyLua('complete-1'),
      1,
      recordKey,
      token!,
      600_000,
      '',
      '',
      201,
      JSON.stringify([['content-type', 'application/json']]),
      Buffer.from(outcome.body),
      outcome.encoding,
      outcome.storage,
    );
    records.push(Number(await bench.admin.memory('USAGE', recordKey, 'SAMPLES', '0')));
    encoding = String(await bench.admin.object('ENCODING', recordKey));
  }
  return { case: name, rawBodyBytes: size, storedBodyBytes: stored, recordBytes: median(records), encoding };
}
