import { Worker as BullWorker, type Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BullMqPublisher, Inbox, jobIdOf, type OutboxJobData } from '../../src/messaging/brokers/bullmq.js';
import { Outbox, outboxStats } from '../../src/messaging/outbox/index.js';
import type { OutboxMessage } from '../../src/messaging/publisher.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { requireService, services } from '../support/services.js';
import { startWorker, type Worker } from './support/children.js';
import { freshOutbox, testPool, until } from './support/pg.js';

// BullMQ as an outbox destination, on the machine's Redis: one job per event (its job id from the outbox id), a
// republished event adds no job, a relay SIGKILLed mid-batch and replaced leaves exactly one job per event, and a
// BullMQ worker with the Inbox applies each event once when BullMQ runs a job twice.
vi.setConfig({ testTimeout: 120_000 });

const tag = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const prefix = `oncely-bull-${tag}`;
const connection = { host: '127.0.0.1', port: services.redis.port, maxRetriesPerRequest: null };
const queues: Queue[] = [];
const workers: Worker[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
let pool: pg.Pool;
let redis: Redis;

function freshQueue(label: string, options: Partial<ConstructorParameters<typeof Queue>[1]> = {}) {
  const queue = new Queue(`${label}-${tag}`, { connection, prefix, ...options });
  queues.push(queue);
  return queue;
}

const message = (id: string, overrides: Partial<OutboxMessage> = {}): OutboxMessage => ({
  id,
  topic: 'payments',
  key: 'acct-1',
  payload: Buffer.from(JSON.stringify({ cents: 500 })),
  contentType: 'application/json',
  headers: { traceparent: '00-abc-def-01' },
  attempt: 1,
  createdAt: new Date('2026-11-27T10:00:00.000Z'),
  ...overrides,
});

beforeAll(async () => {
  await requireService('redis');
  await requireService('postgres');
  pool = testPool(4);
  redis = new Redis({ port: services.redis.port });
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  for (const queue of queues) {
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close().catch(() => {});
  }
  for (const cleanup of cleanups) await cleanup().catch(() => {});
  await pool?.end();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis?.disconnect();
});

describe('BullMqPublisher', () => {
  it('adds one job per event: its id from the outbox id, the event as data; a republish adds none', async () => {
    const queue = freshQueue('one');
    const publisher = new BullMqPublisher({ queue });
    const event = message('41');
    await publisher.publish(event);
    await publisher.publish({ ...event, attempt: 2 });
    expect(await queue.count()).toBe(1);
    const job = (await queue.getJob(jobIdOf('41'))) as Job<OutboxJobData>;
    expect(job.name).toBe('payments');
    expect(job.data).toEqual({
      id: '41',
      topic: 'payments',
      key: 'acct-1',
      payload: { cents: 500 },
      payloadEncoding: 'json',
      contentType: 'application/json',
      headers: { traceparent: '00-abc-def-01' },
      createdAt: '2026-11-27T10:00:00.000Z',
    });
    // Bytes travel as base64.
    await publisher.publish(
      message('42', { payload: Uint8Array.from([0, 255, 7]), contentType: 'application/octet-stream' }),
    );
    const bytes = (await queue.getJob(jobIdOf('42'))) as Job<OutboxJobData>;
    expect(bytes.data.payloadEncoding).toBe('base64');
    expect([...Buffer.from(bytes.data.payload as string, 'base64')]).toEqual([0, 255, 7]);
  });

  it('makes a job id BullMQ accepts of any outbox id (integers, colons), one per id', async () => {
    const queue = freshQueue('ids');
    const publisher = new BullMqPublisher({ queue, name: () => 'e', data: (m) => ({ id: m.id }) });
    const ids = ['7', 'orders:7', 'orders%3A7', 'a:b:c'];
    for (const id of ids) await publisher.publish(message(id));
    expect(new Set(ids.map(jobIdOf)).size).toBe(ids.length);
    expect(await queue.count()).toBe(ids.length);
    for (const id of ids) expect((await queue.getJob(jobIdOf(id)))?.data).toEqual({ id });
  });

  it('routes by a queue function, and refuses what is not a queue', async () => {
    const a = freshQueue('route-a');
    const b = freshQueue('route-b');
    const publisher = new BullMqPublisher({ queue: (m) => (m.topic === 'a' ? a : b) });
    await publisher.publish(message('1', { topic: 'a' }));
    await publisher.publish(message('2', { topic: 'b' }));
    expect([await a.count(), await b.count()]).toEqual([1, 1]);
    const broken = new BullMqPublisher({ queue: () => ({}) as never });
    await expect(broken.publish(message('3'))).rejects.toThrow(/must return a BullMQ Queue/);
    expect(() => new BullMqPublisher({ queue: {} as never })).toThrow(/queue must be a BullMQ Queue/);
    expect(() => new BullMqPublisher({ queue: a, jobOptions: { jobId: 'x' } as never })).toThrow(
      /jobId is the publisher/,
    );
    expect(() => new BullMqPublisher({ queue: a, extra: 1 } as never)).toThrow(/extra/);
  });

  it('warns at relay start when the queue removes ended jobs before the retry horizon, never when it keeps them', async () => {
    const warningsFor = async (options: ConstructorParameters<typeof Queue>[1]) => {
      const warnings: string[] = [];
      const publisher = new BullMqPublisher({ queue: freshQueue('warn', options ?? {}) });
      await publisher.prepare({ retryHorizonMs: 600_000, warn: (w) => warnings.push(w) });
      return warnings;
    };
    const keepFor = (age: number) => ({ removeOnComplete: { age }, removeOnFail: { age } });
    expect(await warningsFor({ connection, prefix })).toEqual([]);
    expect(await warningsFor({ connection, prefix, defaultJobOptions: keepFor(600) })).toEqual([]);
    const short = await warningsFor({ connection, prefix, defaultJobOptions: keepFor(60) });
    expect(short).toHaveLength(2);
    expect(short[0]).toMatch(/removeOnComplete keeps jobs 60 s: .* removeOnComplete: \{ age: 600 \}/);
    const atOnce = await warningsFor({ connection, prefix, defaultJobOptions: { removeOnComplete: true } });
    expect(atOnce).toEqual([expect.stringMatching(/removeOnComplete is true/)]);
    const count = await warningsFor({ connection, prefix, defaultJobOptions: { removeOnFail: 100 } });
    expect(count).toEqual([expect.stringMatching(/removeOnFail keeps the last 100 jobs/)]);
  });
});

describe('relay to BullMQ, SIGKILLed mid-batch and replaced', () => {
  it('leaves exactly one job per event; a worker with the Inbox applies each once though BullMQ runs some twice', async () => {
    const box = await freshOutbox(pool, 'bullmq');
    cleanups.push(box.drop);
    const queue = freshQueue('relay');
    const outbox = new Outbox({ schema: box.schema });
    const total = 600;
    for (let chunk = 0; chunk < total / 100; chunk++) {
      await outbox.addMany(
        pool,
        Array.from({ length: 100 }, (_, i) => ({
          topic: 'payments',
          key: `k${i % 30}`,
          payload: { n: chunk * 100 + i },
        })),
      );
    }
    const config = {
      schema: box.schema,
      broker: 'bullmq',
      queue: queue.name,
      queuePrefix: prefix,
      leaseMs: 2_000,
      batchSize: 100,
    };
    const victim = startWorker('relay', { ...config, stallAfter: 250 });
    workers.push(victim);
    await victim.waitFor((e) => e.type === 'stalled');
    await victim.kill('SIGKILL');
    // BullMQ took jobs the killed relay never marked: the replacement publishes them again.
    const { pending } = await outboxStats(pool, { schema: box.schema });
    expect(pending).toBeGreaterThan(total - 250);
    const replacement = startWorker('relay', config);
    workers.push(replacement);
    await until(async () => (await outboxStats(pool, { schema: box.schema })).pending === 0, 60_000, 100);
    await replacement.kill('SIGTERM');
    expect(await queue.count()).toBe(total);

    // The worker: each job runs through the Inbox, keyed by the event id; every job of the first 50 fails once after
    // its effect (a crash between the effect and BullMQ's completion), so BullMQ runs it again.
    const applied = new Map<number, number>();
    const failedOnce = new Set<string>();
    const inbox = new Inbox(
      async (data: OutboxJobData) => {
        const { n } = data.payload as { n: number };
        applied.set(n, (applied.get(n) ?? 0) + 1);
      },
      {
        store: new RedisStore({ client: redis, prefix: `${prefix}-inbox` }),
        messageId: (data) => data.id,
        scope: 'bullmq-test',
      },
    );
    let ran = 0;
    const worker = new BullWorker<OutboxJobData>(
      queue.name,
      async (job) => {
        ran++;
        const outcome = await inbox.handle(job.data);
        if (outcome.kind === 'failed' || outcome.kind === 'busy') throw new Error(outcome.kind);
        const n = (job.data.payload as { n: number }).n;
        if (n < 50 && !failedOnce.has(job.data.id)) {
          failedOnce.add(job.data.id);
          throw new Error('crashed after the effect');
        }
      },
      { connection, prefix, concurrency: 8 },
    );
    try {
      await until(async () => (await queue.getCompletedCount()) === total, 60_000, 100);
    } finally {
      await worker.close();
    }
    expect(ran).toBe(total + 50);
    expect(applied.size).toBe(total);
    expect([...applied.values()].every((count) => count === 1)).toBe(true);
  });
});
