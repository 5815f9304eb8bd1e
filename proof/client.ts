// One client process of the proof. Each of its `concurrency` virtual users performs operations one after the
// other: pick a key near the run's current position (so clients in every process collide on the same keys),
// then POST it with the same Idempotency-Key and body until a final answer, as a real client does: after a
// timeout, a dropped connection or a lost response it retries at once (after a short backoff); after a 409 or a
// 503 it waits the Retry-After the server gave. Every answer is counted; every distinct 2xx body of a key is
// kept (its digest, and the fencing token and process the body names) for the checker.
//
// Usage: node --import tsx proof/client.ts '<ClientConfig JSON>' (with an IPC channel: it reports progress).
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import {
  type ClientConfig,
  type ClientResult,
  type KeyResult,
  type NotableAnswer,
  OUTCOMES,
  type Outcome,
} from './types.js';

const config = JSON.parse(process.argv[2] ?? '{}') as ClientConfig;
const BUCKET_MS = 100;
const LATENCY_BUCKETS = 10_000;

// A seeded generator (mulberry32), so a run's key choices can be replayed.
let seed = config.seed >>> 0;
function random(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}
const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));

const agents = config.servers.map(() => new Agent({ keepAlive: true, maxSockets: config.concurrency }));
const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
const timeline = Object.fromEntries(OUTCOMES.map((o) => [o, [] as number[]])) as Record<Outcome, number[]>;
const latency = new Array<number>(LATENCY_BUCKETS + 1).fill(0);
const notable: NotableAnswer[] = [];
const keys: Record<string, KeyResult> = {};
const gaveUp: { key: string; attempts: number }[] = [];
let sent = 0;
let operations = 0;
let ok = 0;

interface Answer {
  readonly outcome: Outcome;
  readonly status: number;
  readonly retryAfterMs: number;
  readonly body: Buffer;
  readonly replayed: boolean;
}

function count(outcome: Outcome, at: number): void {
  outcomes[outcome]++;
  const series = timeline[outcome];
  const bucket = Math.max(0, Math.floor((at - config.epoch) / BUCKET_MS));
  while (series.length <= bucket) series.push(0);
  series[bucket]!++;
}

function classify(status: number): Outcome {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 409) return 'conflict';
  if (status === 503) return 'unavailable';
  if (status >= 500) return 'server-error';
  return 'client-error';
}

function post(server: number, key: string, body: string, dropEarly: boolean): Promise<Answer> {
  const { url } = config.servers[server]!;
  const started = Date.now();
  return new Promise((resolve) => {
    let done = false;
    const finish = (answer: Answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (drop !== undefined) clearTimeout(drop);
      const at = Date.now();
      count(answer.outcome, at);
      if (answer.status > 0) latency[Math.min(LATENCY_BUCKETS, at - started)]!++;
      resolve(answer);
    };
    const failed = (outcome: Outcome) => () => {
      finish({ outcome, status: 0, retryAfterMs: 0, body: Buffer.alloc(0), replayed: false });
      outgoing.destroy();
    };
    const outgoing = request(
      `${url}${Number(key.slice(key.lastIndexOf('-') + 1)) % 2 === 0 ? '/pay' : '/pay-wait'}`,
      {
        method: 'POST',
        agent: agents[server],
        headers: {
          'idempotency-key': key,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', failed('connection'));
        response.on('aborted', failed('connection'));
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const retryAfter = Number(response.headers['retry-after'] ?? 1);
          finish({
            outcome: classify(status),
            status,
            retryAfterMs: (Number.isFinite(retryAfter) ? retryAfter : 1) * 1000,
            body: Buffer.concat(chunks),
            replayed: response.headers['idempotent-replayed'] === 'true',
          });
        });
      },
    );
    outgoing.on('error', failed('connection'));
    const timer = setTimeout(failed('timeout'), config.timeoutMs);
    // A lost response: the request reached the server (most of the time), the answer never reaches us.
    const drop = dropEarly ? setTimeout(failed('lost'), between(1, 30)) : undefined;
    outgoing.end(body);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function remember(key: string, answer: Answer): void {
  const entry = keys[key] ?? { bodies: [] };
  keys[key] = entry;
  const digest = createHash('sha256').update(answer.body).digest('hex');
  let seen = entry.bodies.find((body) => body.digest === digest);
  if (seen === undefined) {
    let token: number | null = null;
    let pid: number | null = null;
    try {
      const parsed = JSON.parse(answer.body.toString('utf8')) as { token?: unknown; pid?: unknown };
      if (typeof parsed.token === 'number') token = parsed.token;
      if (typeof parsed.pid === 'number') pid = parsed.pid;
    } catch {
      // a 2xx body that is not the handler's JSON: the checker reports it (no token)
    }
    seen = { digest, token, pid, count: 0, replayed: 0, firstAt: Date.now() };
    entry.bodies.push(seen);
  }
  seen.count++;
  if (answer.replayed) seen.replayed++;
}

/** One logical operation: the same key and body until a final answer. */
async function operate(index: number): Promise<void> {
  const key = `${config.keyPrefix}-${index}`;
  const body = JSON.stringify({ amount: 100 + index, currency: 'EUR', order: key });
  const started = Date.now();
  operations++;
  for (let attempt = 1; ; attempt++) {
    if (Date.now() - started > config.maxOperationMs) {
      gaveUp.push({ key, attempts: attempt - 1 });
      return;
    }
    const dropEarly = config.mode === 'load' && random() < config.lostProbability;
    sent++;
    const server = between(0, config.servers.length - 1);
    const answer = await post(server, key, body, dropEarly);
    switch (answer.outcome) {
      case 'ok':
        ok++;
        remember(key, answer);
        return;
      case 'client-error':
      case 'server-error':
        notable.push({
          at: Date.now(),
          key,
          server: config.servers[server]!.name,
          status: answer.status,
          body: answer.body.toString('utf8').slice(0, 400),
        });
        if (answer.outcome === 'client-error') return;
        await sleep(1_000);
        break;
      case 'conflict':
      case 'unavailable':
        await sleep(answer.retryAfterMs + between(0, 100));
        break;
      default:
        await sleep(between(50, 250));
    }
  }
}

const startedAt = Date.now();
const progress = setInterval(() => process.send?.({ sent, ok }), 200);
// The harness says when the load ends (it sent its requests and every fault was injected and lifted).
let stop = false;
process.on('message', (message) => {
  if (message === 'stop') stop = true;
});
process.on('disconnect', () => {
  stop = true;
});

if (config.mode === 'load') {
  // Every operation picks a key within `window` of the run's position, which moves with the requests sent: at
  // any moment all clients work on the same few dozen keys (concurrent duplicates, then replays), and the
  // position sweeps every key once.
  const user = async () => {
    while (!stop) {
      // Past the planned requests (the harness waits for its faults), the position moves on to new keys.
      const position = Math.floor((sent / config.requests) * config.keys);
      const index = Math.max(0, position + between(-config.window, config.window));
      await operate(index);
    }
  };
  await Promise.all(Array.from({ length: config.concurrency }, user));
} else {
  let next = 0;
  const user = async () => {
    while (next < config.keys) await operate(next++);
  };
  await Promise.all(Array.from({ length: config.concurrency }, user));
}

clearInterval(progress);
for (const agent of agents) agent.destroy();
const result: ClientResult = {
  index: config.index,
  requests: sent,
  operations,
  gaveUp,
  outcomes,
  epoch: config.epoch,
  timeline,
  latency,
  notable,
  keys,
  startedAt,
  endedAt: Date.now(),
};
writeFileSync(config.resultFile, JSON.stringify(result));
process.exit(0);
