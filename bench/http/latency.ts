// Latency at a fixed request rate, below saturation. At saturation (the throughput rounds) latency is only
// concurrency / throughput (Little's law), so "p99 added" there restates the throughput ratio; what a layer adds
// to each request shows at a rate the server keeps up with. autocannon reports whole milliseconds, too coarse
// for this, so requests are paced and timed here, in microseconds, over keep-alive sockets.
import { Agent, request } from 'node:http';
import { BODY } from './measure.js';
import type { ServerProcess } from './processes.js';
import { median } from './summary.js';

export interface LatencyRound {
  readonly requests: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly failures: number;
}

let unique = 0;

/** Sends `rate` requests per second with fresh keys for `durationS` seconds; times each from send to last byte. */
export async function measureLatency(
  server: ServerProcess,
  rate: number,
  durationS: number,
): Promise<LatencyRound> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const url = new URL(server.url);
  const latencies: number[] = [];
  let failures = 0;
  const total = rate * durationS;
  const pending: Promise<void>[] = [];
  const startedAt = performance.now();
  for (let sent = 0; sent < total; sent++) {
    // Open-loop pacing: request n leaves at n / rate seconds, whatever happened to the ones before.
    const due = startedAt + (sent * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      new Promise<void>((resolve) => {
        const begin = process.hrtime.bigint();
        const req = request(
          {
            agent,
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(BODY),
              'idempotency-key': `lat-${process.pid}-${++unique}`,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => {
              if (res.statusCode !== 201) failures++;
              latencies.push(Number(process.hrtime.bigint() - begin) / 1000);
              resolve();
            });
          },
        );
        req.on('error', () => {
          failures++;
          resolve();
        });
        req.end(BODY);
      }),
    );
  }
  await Promise.all(pending);
  agent.destroy();
  latencies.sort((x, y) => x - y);
  return {
    requests: latencies.length,
    p50Us: latencies[Math.floor(latencies.length * 0.5)] ?? 0,
    p99Us: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
    failures,
  };
}

export interface LatencySummary {
  readonly framework: string;
  readonly variant: string;
  readonly rate: number;
  readonly pairs: number;
  readonly p50BaselineUs: number;
  readonly p50LayerUs: number;
  readonly p99BaselineUs: number;
  readonly p99LayerUs: number;
  readonly failures: number;
}

/** Alternating A/B rounds at one fixed rate; medians of each side. */
export async function latencyPairs(
  framework: string,
  variant: string,
  baseline: ServerProcess,
  layer: ServerProcess,
  options: { readonly rate: number; readonly seconds: number; readonly pairs: number },
): Promise<LatencySummary> {
  const a: LatencyRound[] = [];
  const b: LatencyRound[] = [];
  for (let pair = 0; pair < options.pairs; pair++) {
    const order = pair % 2 === 0 ? [baseline, layer] : [layer, baseline];
    for (const server of order) {
      const round = await measureLatency(server, options.rate, options.seconds);
      (server === baseline ? a : b).push(round);
    }
  }
  return {
    framework,
    variant,
    rate: options.rate,
    pairs: options.pairs,
    p50BaselineUs: median(a.map((round) => round.p50Us)),
    p50LayerUs: median(b.map((round) => round.p50Us)),
    p99BaselineUs: median(a.map((round) => round.p99Us)),
    p99LayerUs: median(b.map((round) => round.p99Us)),
    failures: [...a, ...b].reduce((sum, round) => sum + round.failures, 0),
  };
}
