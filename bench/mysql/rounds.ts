/**
 * @module One timed round of a path: `concurrency` loops calling it for `durationMs`, with requests/s, latency
 * quantiles, and the CPU per request of this process and of the server, read from /proc around the round (the
 * PostgreSQL benchmark's round, with two server readings: the whole server, and the part the caller can pin to
 * its own connections).
 */
import { cpuBetween, type ServerCpu } from './fixtures.js';
import type { Path } from './paths.js';

export interface ServerMeters {
  /** Every process of the server: all postgres processes, or the one mariadbd process. */
  readonly whole: ServerCpu;
  /** Only the processes serving this benchmark's connections, where they can be told apart (PostgreSQL's backends). */
  readonly serving?: ServerCpu;
}

export interface Sample {
  readonly perSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly clientCpuUs: number;
  /** µs of the whole server per request. */
  readonly serverCpuUs: number;
  /** µs of the serving processes per request, when known. */
  readonly servingCpuUs: number | undefined;
}

export async function timedRound(
  path: Path,
  concurrency: number,
  durationMs: number,
  prefix: string,
  meters: ServerMeters,
): Promise<Sample> {
  const latencies: number[] = [];
  const wholeBefore = meters.whole();
  const servingBefore = meters.serving?.();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  let serial = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        // Each request starts in an event of its own, as requests from sockets do. Looping back at once would let
        // a loop take the connection it just released ahead of the waiting loops: the mariadb connector's pool
        // serves its queue a tick after a release, and half of 16 loops on 8 connections starved for whole rounds.
        await new Promise((resolve) => setImmediate(resolve));
        const at = performance.now();
        await path.request(`${prefix}-${serial++}`);
        latencies.push(performance.now() - at);
      }
    }),
  );
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const wholeUs = cpuBetween(wholeBefore, meters.whole());
  const servingAfter = meters.serving?.();
  const requests = latencies.length;
  latencies.sort((a, b) => a - b);
  const quantile = (q: number) => latencies[Math.min(requests - 1, Math.floor(q * requests))] ?? 0;
  return {
    perSec: (requests / elapsed) * 1_000,
    p50: quantile(0.5),
    p99: quantile(0.99),
    clientCpuUs: (cpu.user + cpu.system) / requests,
    serverCpuUs: wholeUs / requests,
    servingCpuUs:
      servingBefore === undefined || servingAfter === undefined
        ? undefined
        : cpuBetween(servingBefore, servingAfter) / requests,
  };
}

/** CPU ms per second the server spends while this benchmark sends nothing: other clients' work, the noise floor. */
export async function idleRate(meter: ServerCpu, ms: number): Promise<number> {
  const before = meter();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const spentUs = cpuBetween(before, meter());
  return spentUs / 1_000 / ((performance.now() - started) / 1_000);
}
