// What the diagnostics channels cost the engine's hot path, in process: `engine.execute` of a new key on a
// MemoryStore (acquired, completed) and the replay of that key (replayed), three events per operation, no HTTP.
// Three variants in alternating rounds of one run:
//   before      the engine of the commit before the channels existed (its src/ taken with `git archive`),
//   no listener the engine of this tree with nobody subscribed to any oncely:* channel,
//   subscribed  the same engine with one no-op subscriber on every oncely:* channel.
// Run: node --import tsx bench/diagnostics/engine.ts   (ONCELY_BASE_REV, ROUNDS, OPS to change the defaults)
import { execSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

const BASE_REV = process.env.ONCELY_BASE_REV ?? '9c84c9b^';
const ROUNDS = Number(process.env.ROUNDS ?? 12);
const OPS = Number(process.env.OPS ?? 40_000);
const BATCH = 64;

type Lib = typeof import('../../src/index.js');
const root = fileURLToPath(new URL('../..', import.meta.url));
// Under node_modules/.cache, so the old sources resolve their dependencies (devalue) from this checkout.
const cache = join(root, 'node_modules/.cache');
mkdirSync(cache, { recursive: true });
const base = mkdtempSync(join(cache, 'oncely-diag-base-'));
execSync(`git archive ${BASE_REV} src | tar -x -C ${base}`, { cwd: root });
const before = (await import(join(base, 'src/index.ts'))) as Lib;
const current = (await import('../../src/index.js')) as Lib;

const NAMES = Object.values(current.DIAGNOSTICS_CHANNELS);
const noop = () => {};
const outcome = { status: 201, headers: [] as [], body: Buffer.from('{"ok":true}') };

interface Reading {
  /** CPU time (user + system) per operation: steadier than wall time on a machine others load too. */
  readonly cpuNs: number;
  /** JS heap bytes allocated per operation (the GC profiler's account, as bench/http/heap-counter.mjs). */
  readonly bytes: number;
}

/** One round: OPS operations (a new key executed, then replayed); CPU and heap bytes per operation. */
async function round(lib: Lib, label: string, seq: number): Promise<Reading> {
  const engine = new lib.Engine({ store: new lib.MemoryStore({ maxEntries: OPS * 2 }) });
  const op = async (i: number) => {
    const key = `${label}-${seq}-${i}`;
    await engine.execute({
      key,
      fingerprint: 'f',
      scope: 'bench',
      run: async () => 1,
      settle: () => ({ keep: true, outcome }),
    });
    await engine.begin({ key, fingerprint: 'f', scope: 'bench' });
  };
  const profiler = new v8.GCProfiler();
  profiler.start();
  const usedAtStart = v8.getHeapStatistics().used_heap_size;
  const cpu = process.cpuUsage();
  for (let done = 0; done < OPS; done += BATCH) {
    const batch: Promise<void>[] = [];
    for (let i = done; i < done + BATCH; i++) batch.push(op(i));
    await Promise.all(batch);
  }
  const spent = process.cpuUsage(cpu);
  const usedAtEnd = v8.getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  let allocated = 0;
  let used = usedAtStart;
  for (const gc of statistics) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - used;
    used = gc.afterGC.heapStatistics.usedHeapSize;
  }
  allocated += usedAtEnd - used;
  return { cpuNs: ((spent.user + spent.system) * 1000) / OPS, bytes: allocated / OPS };
}

const variants = {
  before: (seq: number) => round(before, 'before', seq),
  'no listener': (seq: number) => round(current, 'none', seq),
  subscribed: async (seq: number) => {
    for (const name of NAMES) subscribe(name, noop);
    try {
      return await round(current, 'sub', seq);
    } finally {
      for (const name of NAMES) unsubscribe(name, noop);
    }
  },
} as const;
type Variant = keyof typeof variants;
const order = Object.keys(variants) as Variant[];
const times: Record<Variant, Reading[]> = { before: [], 'no listener': [], subscribed: [] };

try {
  for (const variant of order) await variants[variant](-1); // warm-up, not counted
  for (let r = 0; r < ROUNDS; r++) {
    // Each round starts with another variant, so none always runs first or last.
    for (let v = 0; v < order.length; v++) {
      const variant = order[(r + v) % order.length]!;
      times[variant].push(await variants[variant](r));
    }
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const cpuOf = (variant: Variant) => times[variant].map((reading) => reading.cpuNs);
const bytesOf = (variant: Variant) => times[variant].map((reading) => reading.bytes);
const baseline = median(cpuOf('before'));
const baseBytes = median(bytesOf('before'));
console.log(
  `${ROUNDS} rounds x ${OPS} ops (execute a new key + replay it: 3 events per op), base ${BASE_REV}, ` +
    `node ${process.version}, load ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
);
console.log('| variant | CPU ns/op (median) | min–max | vs before | heap bytes/op (median) | vs before |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const variant of order) {
  const cpu = cpuOf(variant);
  const bytes = median(bytesOf(variant));
  console.log(
    `| ${variant} | ${median(cpu).toFixed(0)} | ${Math.min(...cpu).toFixed(0)}–${Math.max(...cpu).toFixed(0)} | ` +
      `${(median(cpu) / baseline).toFixed(3)} | ${bytes.toFixed(0)} | ${bytes - baseBytes >= 0 ? '+' : ''}${(bytes - baseBytes).toFixed(0)} |`,
  );
}
