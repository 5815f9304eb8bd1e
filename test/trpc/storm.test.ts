/**
 * oncely/trpc across processes: two tRPC servers (standalone HTTP adapter) on one Redis prefix, a storm of 50
 * concurrent requests on 10 keys (five each, split between the servers). Exactly one execution per key, counted by
 * the effect in Redis whichever process ran it; with `waitMs` every answer is the first call's bytes, without it
 * each is those bytes or a 409 CONFLICT.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { requireService, services } from '../support/services.js';

const KEYS = 10;
const PER_KEY = 5;
const worker = new URL('./workers/server.ts', import.meta.url).pathname;

const children: ChildProcess[] = [];
const prefixes: string[] = [];
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  // The shared Redis keeps nothing of this file: the records and the effect counters under each prefix.
  const redis = new Redis(services.redis.url, { maxRetriesPerRequest: 1 });
  for (const prefix of prefixes) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  }
  await redis.quit();
});

async function startServer(prefix: string, waitMs: number): Promise<string> {
  prefixes.push(prefix);
  const config = JSON.stringify({ redisUrl: services.redis.url, prefix, waitMs });
  const child = spawn(process.execPath, ['--import', 'tsx', worker, config], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the tRPC server exited with ${code} before listening`)));
    lines.on('line', (line) => {
      const match = /^listening (\d+)$/.exec(line);
      if (match) resolve(match[1] as string);
    });
  });
  return `http://127.0.0.1:${port}`;
}

interface Answer {
  readonly key: string;
  readonly status: number;
  readonly text: string;
}

async function storm(urls: readonly string[]): Promise<{ keys: string[]; answers: Answer[] }> {
  const keys = Array.from({ length: KEYS }, () => randomUUID());
  const sends: Promise<Answer>[] = [];
  for (let round = 0; round < PER_KEY; round++) {
    for (const [index, key] of keys.entries()) {
      const url = urls[(round + index) % urls.length] as string;
      sends.push(
        fetch(`${url}/pay`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ cents: 5 }),
        }).then(async (response) => ({ key, status: response.status, text: await response.text() })),
      );
    }
  }
  return { keys, answers: await Promise.all(sends) };
}

async function effects(prefix: string, keys: readonly string[]): Promise<number[]> {
  const redis = new Redis(services.redis.url, { maxRetriesPerRequest: 1 });
  try {
    return await Promise.all(keys.map(async (key) => Number(await redis.get(`${prefix}:effects:${key}`))));
  } finally {
    await redis.quit();
  }
}

describe('oncely/trpc: a storm over HTTP across two processes on one Redis', () => {
  it('with waitMs: one execution per key, and every answer the first call’s bytes', async () => {
    await requireService('redis');
    const prefix = `oncely-trpc-storm-${randomUUID()}`;
    const urls = await Promise.all([startServer(prefix, 10_000), startServer(prefix, 10_000)]);
    const { keys, answers } = await storm(urls);
    expect(await effects(prefix, keys)).toEqual(Array(KEYS).fill(1));
    const bytes = new Map<string, string>();
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(200);
      expect(bytes.get(answer.key) ?? answer.text).toBe(answer.text);
      bytes.set(answer.key, answer.text);
    }
  });

  it('without waiting: one execution per key, the others those bytes or CONFLICT (409)', async () => {
    await requireService('redis');
    const prefix = `oncely-trpc-storm-${randomUUID()}`;
    const urls = await Promise.all([startServer(prefix, 0), startServer(prefix, 0)]);
    const { keys, answers } = await storm(urls);
    expect(await effects(prefix, keys)).toEqual(Array(KEYS).fill(1));
    const bytes = new Map<string, string>();
    let conflicts = 0;
    for (const answer of answers) {
      if (answer.status === 409) {
        conflicts += 1;
        expect(JSON.parse(answer.text).error.data.code).toBe('CONFLICT');
        continue;
      }
      expect(answer.status, answer.text).toBe(200);
      expect(bytes.get(answer.key) ?? answer.text).toBe(answer.text);
      bytes.set(answer.key, answer.text);
    }
    expect(conflicts).toBeGreaterThan(0);
  });
});
