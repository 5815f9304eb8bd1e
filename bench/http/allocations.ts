// Bytes the HTTP bench server allocates on the JS heap per request, for the layers side by side: a count, not a
// time, so it reads the same on a busy machine as on a quiet one (three rounds agree within 1%), where the
// server CPU of the throughput table swings with whatever else runs. Every allocated byte costs the server the
// work of making the object and a share of the collections that clear it, so a layer's bytes beside the minimal
// layer's show how much of its JavaScript work is its own. Each variant of server.ts runs with heap-counter.mjs
// preloaded; after a warm-up, `REQUESTS` requests with fresh keys (10 connections, autocannon) are counted, three
// times. Writes the `http-allocations` section of docs/benchmarks.md.
// Run: npm run build && flock /tmp/oncely-bench.lock node --import tsx bench/http/allocations.ts
//   (FRAMEWORKS=express,fastify,hono,node REQUESTS=20000 by default; WRITE=0 only prints; VARIANTS=baseline,oncely-memory
//   measures only those, for a quick before/after of a change, and then writes nothing; WORKLOAD=replay counts
//   replays of 1,000 completed keys instead of new requests, and writes nothing either)
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis, stopAll } from '../../test/redis/support/redis-server.js';
import { writeSection } from '../write-section.mjs';
import { completeReplayKeys, fireRequests, type Workload } from './measure.js';
import { type Framework, startServer, type Variant } from './processes.js';

const FRAMEWORKS = (process.env.FRAMEWORKS ?? 'express,fastify,hono,node').split(',') as Framework[];
const ALL_VARIANTS: Variant[] = ['baseline', 'minimal', 'oncely-memory', 'oncely'];
const VARIANTS = (process.env.VARIANTS?.split(',') as Variant[] | undefined) ?? ALL_VARIANTS;
const REQUESTS = Number(process.env.REQUESTS ?? 20_000);
const WORKLOAD = (process.env.WORKLOAD ?? 'unique') as Workload;
const ROUNDS = 3;
const COUNTER = fileURLToPath(new URL('./heap-counter.mjs', import.meta.url));

interface Count {
  readonly allocated: number;
  readonly collections: number;
  readonly gcMicros: number;
}

const dir = mkdtempSync(join(tmpdir(), 'oncely-heap-'));
process.env.ONCELY_HEAP_COUNT_DIR = dir;
const signals = new Map<number, number>();

/** Ends the server's current count and returns it. */
async function count(pid: number): Promise<Count> {
  const n = signals.get(pid) ?? 0;
  signals.set(pid, n + 1);
  process.kill(pid, 'SIGUSR2');
  const file = join(dir, `${pid}-${n}.json`);
  for (let waited = 0; !existsSync(file); waited += 10) {
    if (waited > 10_000) throw new Error(`no heap count from ${pid}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // Written in one call, but the existence check may see it before the write ends.
  await new Promise((resolve) => setTimeout(resolve, 20));
  return JSON.parse(readFileSync(file, 'utf8')) as Count;
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const redis = await startRedis();
const perRequest = new Map<string, number>();
const spread = new Map<string, number>();
try {
  for (const framework of FRAMEWORKS) {
    for (const variant of VARIANTS) {
      const server = await startServer(framework, variant, redis.port, ['--import', COUNTER]);
      try {
        const prefix = `heap-${server.pid}`;
        if (WORKLOAD === 'replay') await completeReplayKeys(server, prefix);
        const fire = async () => {
          const result = await fireRequests(server.url, REQUESTS, WORKLOAD, prefix);
          if (result.non2xx > 0 || result.errors > 0) throw new Error(`${framework}/${variant}: failures`);
          return result.requests.total;
        };
        await fire(); // JIT warm-up, pools, caches; not counted
        const bytes: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          await count(server.pid);
          const requests = await fire();
          bytes.push((await count(server.pid)).allocated / requests);
        }
        perRequest.set(`${framework}/${variant}`, median([...bytes]));
        spread.set(`${framework}/${variant}`, (Math.max(...bytes) - Math.min(...bytes)) / median([...bytes]));
        console.log(`${framework} ${variant}: ${bytes.map((b) => b.toFixed(0)).join(', ')} B per request`);
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  await stopAll([redis]);
  rmSync(dir, { recursive: true, force: true });
}

if (VARIANTS !== ALL_VARIANTS || WORKLOAD !== 'unique') process.exit(0); // the table: every variant, new requests
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const rows = FRAMEWORKS.map((framework) => {
  const of = (variant: Variant) => perRequest.get(`${framework}/${variant}`)!;
  const added = (variant: Variant) => of(variant) - of('baseline');
  const worst = Math.max(...VARIANTS.map((variant) => spread.get(`${framework}/${variant}`)!));
  return `| ${framework} | ${kb(of('baseline'))} | +${kb(added('minimal'))} | +${kb(added('oncely-memory'))} | +${kb(added('oncely'))} | **${(added('oncely') / added('minimal')).toFixed(2)}×** | ${(worst * 100).toFixed(1)}% |`;
});
const markdown = [
  '### Server heap allocation per request',
  '',
  `_Measured ${new Date().toISOString().slice(0, 10)} with \`flock /tmp/oncely-bench.lock node --import tsx bench/http/allocations.ts\` (after \`npm run build\`), Node ${process.version}: ${REQUESTS.toLocaleString('en-US')} requests with fresh keys per round, 10 connections, median of ${ROUNDS} rounds after a warm-up._`,
  '',
  'Bytes the bench server allocates on the JS heap per request, counted by V8’s GC profiler in the server process',
  '(`bench/http/heap-counter.mjs`): a count, not a time, so it reads the same on a busy machine as on a quiet',
  'one. Every byte is an object the server built and the collector later cleared, so beside the minimal layer’s',
  'bytes it shows how much JavaScript work a layer adds of its own. The same servers and routes as the throughput',
  'table; **minimal**, **oncely-memory** and **oncely** as the bytes they add to the bare framework.',
  '',
  '| framework | bare framework KiB | minimal adds | oncely-memory adds | oncely (Redis) adds | oncely / minimal | rounds’ spread |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows,
  '',
  'The Redis store’s share (oncely less oncely-memory) is about what the minimal layer’s two script calls cost in',
  'all; the rest of oncely’s bytes are the adapter and the engine: the request’s view, scope and fingerprint, the',
  'claim and its lease, the captured response and the stored outcome, and the promises between them.',
].join('\n');
console.log(`\n${markdown}\n`);
if (process.env.WRITE !== '0') {
  writeSection('http-allocations', markdown);
  console.log('docs/benchmarks.md: section http-allocations written');
}
