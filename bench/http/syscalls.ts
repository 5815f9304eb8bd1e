// System calls per request in the HTTP bench server, counted by strace: each write to a socket on loopback runs
// the receiver's side of TCP in the writer's time, so the calls a layer adds are CPU it adds, and a count is the
// same on a busy machine as on a quiet one. For each variant: a warm-up, then `REQUESTS` requests with fresh keys
// (10 connections, autocannon) while strace counts the server's calls.
// Run: npm run build && flock /tmp/oncely-bench.lock node --import tsx bench/http/syscalls.ts
//   (FRAMEWORKS=node,fastify VARIANTS=baseline,minimal,oncely REQUESTS=2000 by default)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis, stopAll } from '../../test/redis/support/redis-server.js';
import { fireRequests } from './measure.js';
import { type Framework, startServer, type Variant } from './processes.js';

const FRAMEWORKS = (process.env.FRAMEWORKS ?? 'node,fastify').split(',') as Framework[];
const VARIANTS = (process.env.VARIANTS ?? 'baseline,minimal,oncely').split(',') as Variant[];
const REQUESTS = Number(process.env.REQUESTS ?? 2_000);

const fire = (url: string, amount: number) => fireRequests(url, amount, 'unique');

/** strace -c's table: calls per system call name. */
function parseSummary(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of text.split('\n')) {
    const cells = line.trim().split(/\s+/);
    // % time, seconds, usecs/call, calls, [errors], syscall
    if (cells.length < 5 || !/^\d/.test(cells[0]!)) continue;
    const name = cells.at(-1)!;
    if (name === 'total') continue;
    calls.set(name, Number(cells[3]));
  }
  return calls;
}

const redis = await startRedis();
try {
  for (const framework of FRAMEWORKS) {
    const results = new Map<Variant, Map<string, number>>();
    for (const variant of VARIANTS) {
      const server = await startServer(framework, variant, redis.port);
      const dir = mkdtempSync(join(tmpdir(), 'oncely-syscalls-'));
      try {
        await fire(server.url, 500);
        const out = join(dir, 'strace.txt');
        const strace = spawn('strace', ['-f', '-c', '-o', out, '-p', String(server.pid)], {
          stdio: 'ignore',
        });
        await new Promise((resolve) => setTimeout(resolve, 500));
        const result = await fire(server.url, REQUESTS);
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${framework}/${variant}: failures`);
        strace.kill('SIGINT');
        await new Promise((resolve) => strace.once('exit', resolve));
        const calls = parseSummary(readFileSync(out, 'utf8'));
        for (const [name, count] of calls) calls.set(name, count / REQUESTS);
        results.set(variant, calls);
      } finally {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }
    const names = [...new Set([...results.values()].flatMap((calls) => [...calls.keys()]))]
      .filter((name) => [...results.values()].some((calls) => (calls.get(name) ?? 0) >= 0.05))
      .sort();
    console.log(`\n${framework}: system calls per request (${REQUESTS} requests, fresh keys)\n`);
    console.log(`| call | ${VARIANTS.join(' | ')} |`);
    console.log(`| --- | ${VARIANTS.map(() => '---:').join(' | ')} |`);
    for (const name of names)
      console.log(
        `| ${name} | ${VARIANTS.map((v) => (results.get(v)!.get(name) ?? 0).toFixed(2)).join(' | ')} |`,
      );
    const total = (v: Variant) => [...results.get(v)!.values()].reduce((a, b) => a + b, 0);
    console.log(`| **all** | ${VARIANTS.map((v) => total(v).toFixed(2)).join(' | ')} |`);
  }
} finally {
  await stopAll([redis]);
}
