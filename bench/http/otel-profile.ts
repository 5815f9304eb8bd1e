// Where the HTTP bench server's CPU goes with the instrumentation on: each otel variant of server.ts runs under
// --cpu-prof while autocannon drives it (new keys, then replays), and the profile's samples are split by file:
// oncely/otel, @opentelemetry/api, the rest of @opentelemetry/* (the SDK), everything else. On a CPU-bound server
// the instrumentation's share of the samples is its share of the throughput, and unlike a throughput, a share of
// samples hardly moves with the load other processes put on a shared machine. (The SDK's garbage and async-hook
// work is not attributed to its files: its share is a floor.)
// Run: npm run build && flock /tmp/oncely-bench.lock node --import tsx bench/http/otel-profile.ts
//   (FRAMEWORKS=express,fastify SECONDS=10 by default)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedis, stopAll } from '../../test/redis/support/redis-server.js';
import { completeReplayKeys, measureRound, type Workload } from './measure.js';
import { type Framework, startServer, type Variant } from './processes.js';

const FRAMEWORKS = (process.env.FRAMEWORKS ?? 'express,fastify').split(',') as Framework[];
const SECONDS = Number(process.env.SECONDS ?? 10);
const VARIANTS: Variant[] = ['oncely-otel', 'oncely-otel-sdk'];
const WORKLOADS: Workload[] = ['unique', 'replay'];

interface Profile {
  nodes: { id: number; callFrame: { url: string } }[];
  samples: number[];
}

function shares(profile: Profile) {
  const urls = new Map(profile.nodes.map((node) => [node.id, node.callFrame.url]));
  const count = { instrumentation: 0, api: 0, sdk: 0 };
  for (const sample of profile.samples) {
    const url = urls.get(sample) ?? '';
    if (url.includes('/dist/otel/')) count.instrumentation++;
    else if (url.includes('/@opentelemetry/api/')) count.api++;
    else if (url.includes('/@opentelemetry/')) count.sdk++;
  }
  const total = profile.samples.length;
  return {
    total,
    instrumentation: count.instrumentation / total,
    api: count.api / total,
    sdk: count.sdk / total,
  };
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const redisProcess = await startRedis();
const admin = new Redis({ port: redisProcess.port, host: '127.0.0.1' });
const rows: string[] = [];
try {
  for (const framework of FRAMEWORKS) {
    for (const variant of VARIANTS) {
      for (const workload of WORKLOADS) {
        const dir = mkdtempSync(join(tmpdir(), 'oncely-otel-http-prof-'));
        const server = await startServer(framework, variant, redisProcess.port, [
          '--cpu-prof',
          `--cpu-prof-dir=${dir}`,
        ]);
        try {
          const prefix = `prof-${framework}-${variant}`;
          if (workload === 'replay') await completeReplayKeys(server, prefix);
          await measureRound(server, admin, workload, prefix, 1);
          const round = await measureRound(server, admin, workload, prefix, SECONDS);
          await server.stop();
          // The server process writes its profile as it exits; autocannon's own process is not profiled.
          const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
          const profile = JSON.parse(readFileSync(join(dir, file!), 'utf8')) as Profile;
          const split = shares(profile);
          const percent = (share: number) => `${(share * 100).toFixed(2)}%`;
          const row = `| ${framework} | ${workload} | ${variant} | ${round.rps.toFixed(0)} | ${percent(split.instrumentation)} | ${percent(split.api)} | ${percent(split.sdk)} | ${split.total} | ${load()} |`;
          console.log(row);
          rows.push(row);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
      await admin.flushall();
    }
  }
} finally {
  admin.disconnect();
  await stopAll([redisProcess]);
}
console.log(
  '\n| framework | workload | variant | req/s | oncely/otel | @opentelemetry/api | SDK | samples | load after |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const row of rows) console.log(row);
