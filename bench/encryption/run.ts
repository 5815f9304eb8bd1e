// What encryption at rest costs per request: the engine's new request (begin + complete) and replay (begin +
// open), with and without `encryption`, on the memory store (where nothing but oncely's own work is measured) and
// on the machine's Redis (a real round trip). The variants alternate round by round (A/B, then B/A) in one process,
// so a machine whose speed changes within minutes changes both alike; each cell is the median over the rounds, with
// the spread. CPU is this process's user + system time per request (process.cpuUsage), which is what the option
// adds to an application server; Redis' own work does not change but for a few more bytes per value.
// Run: node --import tsx bench/encryption/run.ts   (REDIS_URL to point elsewhere; PAIRS, OPS to resize)
import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { resolveEncryption } from '../../src/core/encryption-keys.js';
import { decryptOutcome, encryptOutcome } from '../../src/core/outcome-cipher.js';
import { Engine, type EngineOptions, MemoryStore, type Outcome, type Store } from '../../src/index.js';
import type { StoredOutcome } from '../../src/store.js';
import { RedisStore } from '../../src/stores/redis/index.js';

const PAIRS = Number(process.env.PAIRS ?? 8);
const OPS = { memory: Number(process.env.OPS ?? 5_000), redis: Number(process.env.OPS ?? 2_000) };
const CONCURRENCY = 32;
const encryption = { keys: [{ id: '2026-06', key: randomBytes(32) }] };

/** A JSON body of about `bytes` bytes, like a payment answer with a list in it. */
function response(bytes: number): Outcome {
  const items = Array.from({ length: Math.max(1, Math.round(bytes / 64)) }, (_, i) => ({
    id: `item_${i}_${randomUUID().slice(0, 8)}`,
    amount: 1000 + i,
  }));
  const body = Buffer.from(JSON.stringify({ id: 'pay_1', status: 'succeeded', items }).slice(0, bytes));
  return {
    status: 201,
    headers: [
      ['content-type', 'application/json'],
      ['location', '/payments/pay_1'],
    ],
    body,
  };
}

/** Runs `count` calls, `CONCURRENCY` at a time; CPU microseconds per call. */
async function timed(count: number, call: (i: number) => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await call(next++);
    }),
  );
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

/** A store and how to weigh one of its records at rest. */
interface Backend {
  readonly store: Store;
  bytes(key: string): Promise<number>;
}

interface Variant {
  readonly engine: Engine;
  readonly backend: Backend;
  readonly keys: string[];
}

function variant(backend: Backend, encrypted: boolean): Variant {
  const { store } = backend;
  const options: EngineOptions = encrypted ? { store, encryption } : { store };
  return { engine: new Engine(options), backend, keys: [] };
}

/** One round of new requests, then one of replays of the keys it stored. */
async function round(v: Variant, ops: number, outcome: Outcome) {
  const keys = Array.from({ length: ops }, () => randomUUID());
  const settle = () => ({ keep: true as const, outcome });
  const run = async () => outcome;
  const fresh = await timed(ops, (i) => v.engine.execute({ key: keys[i]!, fingerprint: 'f', run, settle }));
  const replay = await timed(ops, (i) => v.engine.execute({ key: keys[i]!, fingerprint: 'f', run, settle }));
  v.keys.push(keys[0]!);
  // Untimed: the next round starts from a store of the same size, and the machine's memory is left alone.
  await Promise.all(keys.slice(1).map((key) => v.backend.store.delete(key)));
  return { fresh, replay };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const cell = (values: number[]) =>
  `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`;

async function measure(name: string, backend: () => Backend, ops: number, bytes: number[]) {
  const rows: string[] = [];
  for (const size of bytes) {
    const outcome = response(size);
    const plain = variant(backend(), false);
    const sealed = variant(backend(), true);
    // Warm-up: JIT, connections, script loading.
    await round(plain, Math.min(ops, 2_000), outcome);
    await round(sealed, Math.min(ops, 2_000), outcome);
    const runs = {
      plain: { fresh: [] as number[], replay: [] as number[] },
      sealed: { fresh: [] as number[], replay: [] as number[] },
    };
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = pair % 2 === 0 ? (['plain', 'sealed'] as const) : (['sealed', 'plain'] as const);
      for (const which of order) {
        const result = await round(which === 'plain' ? plain : sealed, ops, outcome);
        runs[which].fresh.push(result.fresh);
        runs[which].replay.push(result.replay);
      }
    }
    const ratio = (a: number[], b: number[]) => (median(b) / median(a)).toFixed(2);
    const added = (a: number[], b: number[]) => (median(b) - median(a)).toFixed(1);
    const plainBytes = await plain.backend.bytes(plain.keys[0]!);
    const sealedBytes = await sealed.backend.bytes(sealed.keys[0]!);
    rows.push(
      `| ${name} | ${size} B | new request | ${cell(runs.plain.fresh)} | ${cell(runs.sealed.fresh)} | +${added(runs.plain.fresh, runs.sealed.fresh)} | ${ratio(runs.plain.fresh, runs.sealed.fresh)}x | ${plainBytes} → ${sealedBytes} |`,
      `| ${name} | ${size} B | replay | ${cell(runs.plain.replay)} | ${cell(runs.sealed.replay)} | +${added(runs.plain.replay, runs.sealed.replay)} | ${ratio(runs.plain.replay, runs.sealed.replay)}x | |`,
    );
  }
  return rows;
}

/** The memory store's record at rest: the outcome it holds (its other fields are the same either way). */
function memoryBackend(): Backend {
  const store = new MemoryStore({ maxEntries: 2_000_000 });
  return {
    store,
    bytes: async (key) => {
      const outcome = (await store.get(key))?.outcome;
      if (outcome === undefined) return 0;
      let size = outcome.body.byteLength;
      for (const [n, v] of outcome.headers) size += Buffer.byteLength(n) + Buffer.byteLength(v);
      return size;
    },
  };
}

/** The cipher alone, per outcome: `encryptOutcome` and `decryptOutcome`, no store and no engine around them. */
function cipherAlone(size: number): string {
  const resolved = resolveEncryption(encryption);
  const { status, headers, body } = response(size);
  const stored: StoredOutcome = { status, headers, body, encoding: 'identity', storage: 'inline' };
  const times = { seal: [] as number[], open: [] as number[] };
  const count = 50_000;
  for (let r = 0; r < 5; r++) {
    let at = process.hrtime.bigint();
    let sealed = stored;
    for (let i = 0; i < count; i++) sealed = encryptOutcome(stored, 'storage-key', resolved);
    times.seal.push(Number(process.hrtime.bigint() - at) / count / 1000);
    at = process.hrtime.bigint();
    for (let i = 0; i < count; i++) decryptOutcome(sealed, 'storage-key', resolved);
    times.open.push(Number(process.hrtime.bigint() - at) / count / 1000);
  }
  return `${size} B outcome: seal ${cell(times.seal)} µs, open ${cell(times.open)} µs`;
}

const sizes = [256, 4_096];
const cipherLines = sizes.map(cipherAlone);
const lines: string[] = [];
lines.push(...(await measure('memory', memoryBackend, OPS.memory, sizes)));
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 0 });
const prefixes: string[] = [];
try {
  await redis.ping();
  const redisBackend = (): Backend => {
    const prefix = `oncely-bench-enc-${randomUUID().slice(0, 8)}`;
    prefixes.push(prefix);
    // The whole record's value: header, fingerprint and outcome (docs/stores/redis.md has the layout).
    return {
      store: new RedisStore({ client: redis, prefix }),
      bytes: (key) => redis.strlen(`${prefix}:{${key}}`),
    };
  };
  lines.push(...(await measure('Redis', redisBackend, OPS.redis, sizes)));
} finally {
  for (const prefix of prefixes) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  }
  redis.disconnect();
}
console.log(
  '\n| store | body | path | µs CPU / request, plain | with encryption | added µs | ratio | bytes at rest, plain → encrypted |\n| --- | --- | --- | --- | --- | --- | --- | --- |',
);
for (const line of lines) console.log(line);
console.log(`\nThe cipher alone (median (min–max) of 5 rounds of 50,000): ${cipherLines.join('; ')}.`);
console.log(
  `\n${PAIRS} alternating pairs; ${OPS.memory} (memory) / ${OPS.redis} (Redis) requests per round, ${CONCURRENCY} at a time; median (min–max) over the rounds. Node ${process.version}; load ${loadavg()
    .map((v) => v.toFixed(2))
    .join(' ')}; ${new Date().toISOString()}`,
);
