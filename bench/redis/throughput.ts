import { readFileSync } from 'node:fs';
import { RedisStore } from '../../src/stores/redis/index.js';
import { minimalLayer } from '../http/minimal.js';
import { type Bench, engineKey, jsonBody, newEngine, outcomeOf } from './fixtures.js';

export interface Scenario {
  readonly name: string;
  /** One operation; `i` is unique per call within a round. */
  readonly op: (i: number) => Promise<unknown>;
}

export interface Sample {
  readonly opsPerSec: number;
  /** CPU time of this (client) process per operation, in µs. */
  readonly clientCpuUs: number;
  /** CPU time of redis-server per operation, in µs (utime + stime from /proc). */
  readonly redisCpuUs: number;
}

const RETENTION_MS = 120_000;
const REPLAY_POOL = 1_000;

/** The scenarios, all on the same connection: a plain SET as the one-round-trip baseline, then the store. */
export async function scenarios(bench: Bench): Promise<Scenario[]> {
  const store = new RedisStore({ client: bench.client, prefix: 'tp' });
  const engine = newEngine(store);
  const body = jsonBody(200, 2);
  let serial = 0;
  const fresh = () => engineKey(`fresh-${serial++}`);
  const settle = (result: Buffer) => ({
    keep: true as const,
    outcome: { status: 201, headers: [], body: result },
  });
  const replayKeys = Array.from({ length: REPLAY_POOL }, (_, i) => engineKey(`replay-${i}`));
  for (const key of replayKeys) {
    await engine.execute({ key, fingerprint: 'f', run: async () => body, settle, retentionMs: 3_600_000 });
  }
  const lease = { fingerprint: 'f', leaseMs: 30_000, retentionMs: RETENTION_MS };
  const minimal = minimalLayer(bench.client);
  const text = body.toString();
  for (const key of replayKeys) {
    await minimal.start(`replay-${key}`, 'f');
    await minimal.complete(`replay-${key}`, text);
  }
  return [
    { name: 'baseline: SET (1 round trip)', op: () => bench.client.set(fresh(), body, 'PX', RETENTION_MS) },
    {
      name: 'store: new request (begin + complete)',
      op: async () => {
        const key = fresh();
        const r = await store.begin({ key, ...lease });
        if (r.kind !== 'acquired') throw new Error(`expected acquired, got ${r.kind}`);
        await store.complete({ key, token: r.token, outcome: outcomeOf(body), retentionMs: RETENTION_MS });
      },
    },
    {
      name: 'store: replay (begin)',
      op: async (i) => {
        const r = await store.begin({ key: replayKeys[i % REPLAY_POOL]!, ...lease });
        if (r.kind !== 'replay') throw new Error(`expected replay, got ${r.kind}`);
      },
    },
    {
      name: 'minimal layer: new request (2 scripts)',
      op: async () => {
        const key = fresh();
        const r = await minimal.start(key, 'f');
        if (r.kind !== 'run') throw new Error(`expected run, got ${r.kind}`);
        await minimal.complete(key, text);
      },
    },
    {
      name: 'minimal layer: replay (1 script)',
      op: async (i) => {
        const r = await minimal.start(`replay-${replayKeys[i % REPLAY_POOL]!}`, 'f');
        if (r.kind !== 'replay') throw new Error(`expected replay, got ${r.kind}`);
      },
    },
    {
      name: 'engine: new request',
      op: () => engine.execute({ key: fresh(), fingerprint: 'f', run: async () => body, settle }),
    },
    {
      name: 'engine: replay',
      op: async (i) => {
        const r = await engine.execute({
          key: replayKeys[i % REPLAY_POOL]!,
          fingerprint: 'f',
          run: async () => body,
          settle,
        });
        if (r.kind !== 'replayed') throw new Error(`expected replayed, got ${r.kind}`);
      },
    },
  ];
}

/** Runs `op` from `concurrency` loops for `durationMs`, measuring throughput and the CPU both sides spent. */
export async function runRound(
  scenario: Scenario,
  redisPid: number,
  concurrency: number,
  durationMs: number,
): Promise<Sample> {
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const redisBefore = redisCpuMs(redisPid);
  const startedAt = performance.now();
  const until = startedAt + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) await scenario.op(next++);
    }),
  );
  const elapsedMs = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuBefore);
  const redisMs = redisCpuMs(redisPid) - redisBefore;
  return {
    opsPerSec: (next / elapsedMs) * 1000,
    clientCpuUs: (cpu.user + cpu.system) / next,
    redisCpuUs: (redisMs * 1000) / next,
  };
}

// Linux reports process CPU in clock ticks of 10 ms (CLK_TCK 100); a round of a second spans ~100 ticks.
const TICK_MS = 10;

function redisCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}
