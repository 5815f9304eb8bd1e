import autocannon, { type Result } from 'autocannon';
import type { Redis } from 'ioredis';
import { processCpuMicros, redisCpuMicros, type ServerProcess } from './processes.js';

export type Workload = 'unique' | 'replay';

export interface Round {
  readonly requests: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Answers other than 2xx, and socket errors/timeouts: a correct run has none. */
  readonly failures: number;
  /** CPU of the server process per request, µs. */
  readonly serverCpuUs: number;
  /** CPU of redis-server per request, µs. */
  readonly redisCpuUs: number;
  /** Requests sent: `requests` and the ones still in flight when the round ended, which the server finishes. */
  readonly sent: number;
}

export const BODY = '{"amount":100,"currency":"EUR"}';
export const CONNECTIONS = 50;
/** Keys of the replay workload: completed once before the rounds, then requested over and over. */
export const REPLAY_KEYS = 1_000;

let unique = 0;

/** The request stream of a workload: a fresh key per request, or a cycle over the completed replay keys. */
export function requestsFor(workload: Workload, replayPrefix: string) {
  let next = 0;
  return [
    {
      setupRequest(request: { headers: Record<string, string> }) {
        request.headers['idempotency-key'] =
          workload === 'unique' ? `u-${process.pid}-${++unique}` : `${replayPrefix}-${next++ % REPLAY_KEYS}`;
        return request;
      },
    },
  ];
}

/** Sends `amount` requests of a workload to `url` over 10 connections, as fast as they are answered. */
export function fireRequests(
  url: string,
  amount: number,
  workload: Workload,
  replayPrefix = '',
): Promise<Result> {
  return autocannon({
    url,
    connections: 10,
    amount,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
    requests: requestsFor(workload, replayPrefix),
  });
}

/** Completes every replay key once on `server`, so the rounds that follow only replay. */
export async function completeReplayKeys(server: ServerProcess, replayPrefix: string): Promise<void> {
  const result = await fireRequests(server.url, REPLAY_KEYS, 'replay', replayPrefix);
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`warming replay keys on ${server.url} failed`);
}

/** One measured round against one server: throughput, latency, and CPU per request in the server and in Redis. */
export async function measureRound(
  server: ServerProcess,
  admin: Redis,
  workload: Workload,
  replayPrefix: string,
  durationS: number,
): Promise<Round> {
  const cpuBefore = processCpuMicros(server.pid);
  const redisBefore = redisCpuMicros(await admin.info('cpu'));
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: durationS,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
    requests: requestsFor(workload, replayPrefix),
  });
  const serverCpu = processCpuMicros(server.pid) - cpuBefore;
  const redisCpu = redisCpuMicros(await admin.info('cpu')) - redisBefore;
  const requests = result.requests.total;
  return {
    requests,
    rps: requests / durationS,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
    serverCpuUs: serverCpu / Math.max(1, requests),
    redisCpuUs: redisCpu / Math.max(1, requests),
    sent: result.requests.sent,
  };
}

/**
 * One unmeasured round on each side (JIT warm-up, connection pools, a cache filling), then `pairs` pairs of rounds
 * in alternating order (A B, B A, …), so a machine that speeds up or slows down meets both sides alike.
 */
export async function alternatingPairs<R extends Round>(
  a: ServerProcess,
  b: ServerProcess,
  options: { readonly pairs: number; readonly roundS: number },
  round: (server: ServerProcess, seconds: number) => Promise<R>,
): Promise<{ a: R; b: R }[]> {
  await round(a, 1);
  await round(b, 1);
  const pairs: { a: R; b: R }[] = [];
  for (let pair = 0; pair < options.pairs; pair++) {
    const first = pair % 2 === 0 ? a : b;
    const firstRound = await round(first, options.roundS);
    const secondRound = await round(first === a ? b : a, options.roundS);
    pairs.push(first === a ? { a: firstRound, b: secondRound } : { a: secondRound, b: firstRound });
  }
  return pairs;
}
