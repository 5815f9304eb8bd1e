// Where the HTTP bench server's CPU goes, per request, for the layers side by side: each variant of server.ts runs
// under --cpu-prof while autocannon drives it, and the profile's self time is split by where the code lives
// (oncely's own files one by one, ioredis, the framework, Node's internals, the garbage collector) and divided by
// the requests served. A variant's extra microseconds per bucket, beside the minimal layer's, say which part of
// the layer costs what. V8 samples the main thread by the wall clock, so a sample also covers time the process
// waited for a core: a socket write that wakes autocannon or Redis on a busy two-core machine is charged the time
// until the server runs again. The write buckets ((writev), (writeUtf8String), (writeBuffer)) grow with the load
// the other processes put on the machine; compare variants measured in the same run on a quiet machine only.
// Run: npm run build && flock /tmp/oncely-bench.lock node --import tsx bench/http/profile.ts
//   (FRAMEWORKS=express VARIANTS=minimal,oncely WORKLOADS=unique SECONDS=8 TOP=12 by default; KEEP_PROFILES=1)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedis, stopAll } from '../../test/redis/support/redis-server.js';
import { completeReplayKeys, measureRound, type Workload } from './measure.js';
import { type Framework, startServer, type Variant } from './processes.js';

const FRAMEWORKS = (process.env.FRAMEWORKS ?? 'express').split(',') as Framework[];
const VARIANTS = (process.env.VARIANTS ?? 'minimal,oncely').split(',') as Variant[];
const WORKLOADS = (process.env.WORKLOADS ?? 'unique').split(',') as Workload[];
const SECONDS = Number(process.env.SECONDS ?? 8);
const TOP = Number(process.env.TOP ?? 12);

interface Profile {
  nodes: { id: number; callFrame: { url: string; functionName: string } }[];
  samples: number[];
  timeDeltas: number[];
}

/** The bucket a sampled frame's self time goes to. */
function bucketOf(url: string, name: string): string {
  if (url === '') return name === '(idle)' ? 'idle' : `(${name.replace(/[()]/g, '')})`;
  const dist = url.indexOf('/dist/');
  if (dist >= 0 && !url.includes('node_modules')) return `oncely ${url.slice(dist + 6)}`;
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 13).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  return 'other';
}

/** Self time per bucket in µs per request (idle left out). */
function split(profile: Profile, requests: number): Map<string, number> {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const micros = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = frames.get(id)!;
    const bucket = bucketOf(frame.url, frame.functionName);
    if (bucket === 'idle') return;
    micros.set(bucket, (micros.get(bucket) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  for (const [bucket, us] of micros) micros.set(bucket, us / requests);
  return micros;
}

const redisProcess = await startRedis();
const admin = new Redis({ port: redisProcess.port, host: '127.0.0.1' });
try {
  for (const framework of FRAMEWORKS) {
    for (const workload of WORKLOADS) {
      const results = new Map<Variant, Map<string, number>>();
      for (const variant of VARIANTS) {
        const dir = mkdtempSync(join(tmpdir(), 'oncely-http-prof-'));
        const server = await startServer(framework, variant, redisProcess.port, [
          '--cpu-prof',
          `--cpu-prof-dir=${dir}`,
        ]);
        try {
          const prefix = `prof-${framework}-${variant}`;
          if (workload === 'replay') await completeReplayKeys(server, prefix);
          const warm = await measureRound(server, admin, workload, prefix, 2);
          const round = await measureRound(server, admin, workload, prefix, SECONDS);
          await server.stop();
          const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
          const profile = JSON.parse(readFileSync(join(dir, file!), 'utf8')) as Profile;
          // The profile covers the warm-up round and start-up too: divide by every request the process served.
          const requests = warm.requests + round.requests;
          results.set(variant, split(profile, requests));
          console.log(`${framework} ${workload} ${variant}: ${round.rps.toFixed(0)} req/s`);
        } finally {
          // KEEP_PROFILES=1 leaves the .cpuprofile for a closer look (Chrome DevTools, or a script of your own).
          if (process.env.KEEP_PROFILES === '1') console.log(`profile kept in ${dir}`);
          else rmSync(dir, { recursive: true, force: true });
        }
      }
      await admin.flushall();
      const buckets = new Set([...results.values()].flatMap((micros) => [...micros.keys()]));
      const last = results.get(VARIANTS.at(-1)!)!;
      const rows = [...buckets].sort((a, b) => (last.get(b) ?? 0) - (last.get(a) ?? 0)).slice(0, TOP);
      const total = (micros: Map<string, number>) => [...micros.values()].reduce((a, b) => a + b, 0);
      console.log(`\n${framework}, ${workload}: self CPU in µs per request\n`);
      console.log(`| where | ${VARIANTS.join(' | ')} |`);
      console.log(`| --- | ${VARIANTS.map(() => '---:').join(' | ')} |`);
      for (const bucket of rows)
        console.log(
          `| ${bucket} | ${VARIANTS.map((variant) => (results.get(variant)!.get(bucket) ?? 0).toFixed(1)).join(' | ')} |`,
        );
      console.log(
        `| **all** | ${VARIANTS.map((variant) => total(results.get(variant)!).toFixed(1)).join(' | ')} |\n`,
      );
    }
  }
} finally {
  admin.disconnect();
  await stopAll([redisProcess]);
}
