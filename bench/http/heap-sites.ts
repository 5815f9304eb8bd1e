// Where the bytes of one request are allocated in the HTTP bench server, by function: a sampling heap profile that
// keeps what the collector cleared (bench/http/heap-sites.mjs), taken over `REQUESTS` requests with fresh keys after
// a warm-up, its bytes divided by the requests. allocations.ts counts the whole; this says which functions make it,
// so a change to the request path can be aimed and checked (bytes, not time: the same on a busy machine). Sampling
// makes each row an estimate (within a few percent over 5,000 requests); the totals agree with allocations.ts.
// Run: node --import tsx bench/http/heap-sites.ts
//   (FRAMEWORKS=express VARIANTS=oncely WORKLOAD=unique REQUESTS=5000 TOP=40; ONCELY_LIB=src for the sources, as
//   processes.ts passes it on; GROUP=file sums by file instead of by function; SELF=1 lists each function's own
//   bytes, not charged to the library frame that called it)
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis, stopAll } from '../../test/redis/support/redis-server.js';
import { completeReplayKeys, fireRequests, type Workload } from './measure.js';
import { type Framework, startServer, type Variant } from './processes.js';

const FRAMEWORKS = (process.env.FRAMEWORKS ?? 'express').split(',') as Framework[];
const VARIANTS = (process.env.VARIANTS ?? 'oncely').split(',') as Variant[];
const WORKLOAD = (process.env.WORKLOAD ?? 'unique') as Workload;
const REQUESTS = Number(process.env.REQUESTS ?? 5_000);
const TOP = Number(process.env.TOP ?? 40);
const BY_FILE = process.env.GROUP === 'file';
const SELF = process.env.SELF === '1';
const SAMPLER = fileURLToPath(new URL('./heap-sites.mjs', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}

const dir = mkdtempSync(join(tmpdir(), 'oncely-heap-sites-'));
process.env.ONCELY_HEAP_SITES_DIR = dir;

async function waitFor(file: string): Promise<void> {
  for (let waited = 0; !existsSync(file); waited += 10) {
    if (waited > 20_000) throw new Error(`no ${file}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Where a frame's code lives: the library's file, a package, or Node's own. */
function place(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  if (path.startsWith(root)) {
    const inside = path.slice(root.length);
    const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(inside);
    return pkg ? pkg[1]! : inside;
  }
  if (path.startsWith('node:') || path === '') return path || '(native)';
  return path;
}

/**
 * Each node's bytes charged to the nearest frame of the library (src/ or dist/), or to the frame itself when no
 * library frame is on its stack: what a request's own code made, the allocations inside Node's and the drivers'
 * calls it made included.
 */
function charge(node: Node, owner: string | undefined, out: Map<string, number>, self: Map<string, number>) {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = place(url);
  const name = BY_FILE ? where : `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  const ours = /^(src|dist)\//.test(where);
  const mine = ours ? name : owner;
  self.set(name, (self.get(name) ?? 0) + node.selfSize);
  const key = mine ?? `(outside oncely) ${BY_FILE ? where : name}`;
  out.set(key, (out.get(key) ?? 0) + node.selfSize);
  for (const child of node.children) charge(child, mine, out, self);
}

const redis = await startRedis();
try {
  for (const framework of FRAMEWORKS) {
    for (const variant of VARIANTS) {
      const server = await startServer(framework, variant, redis.port, ['--import', SAMPLER]);
      try {
        const prefix = `sites-${server.pid}`;
        if (WORKLOAD === 'replay') await completeReplayKeys(server, prefix);
        await fireRequests(server.url, REQUESTS, WORKLOAD, prefix); // warm-up, not counted
        process.kill(server.pid, 'SIGUSR2');
        await waitFor(join(dir, `${server.pid}.started`));
        const result = await fireRequests(server.url, REQUESTS, WORKLOAD, prefix);
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${framework}/${variant}: failures`);
        process.kill(server.pid, 'SIGUSR2');
        const file = join(dir, `${server.pid}.heapprofile`);
        await waitFor(file);
        const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: Node };
        const requests = result.requests.total;
        const charged = new Map<string, number>();
        const self = new Map<string, number>();
        charge(profile.head, undefined, charged, self);
        const total = [...charged.values()].reduce((a, b) => a + b, 0);
        const ours = [...charged].filter(([k]) => !k.startsWith('(outside'));
        const oursTotal = ours.reduce((a, [, b]) => a + b, 0);
        console.log(
          `\n${framework} ${variant} ${WORKLOAD}: ${(total / requests).toFixed(0)} B per request sampled, ` +
            `${(oursTotal / requests).toFixed(0)} B of it under oncely's frames (${requests} requests)`,
        );
        const rows = [...(SELF ? self : charged)].sort((a, b) => b[1] - a[1]).slice(0, TOP);
        for (const [name, bytes] of rows)
          console.log(`${(bytes / requests).toFixed(0).padStart(7)} B  ${name}`);
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  await stopAll([redis]);
  rmSync(dir, { recursive: true, force: true });
}
