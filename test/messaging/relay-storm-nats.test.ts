import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { Outbox, outboxStats } from '../../src/messaging/outbox/index.js';
import { requireService } from '../support/services.js';
import { startWorker, type Worker } from './support/children.js';
import { freshStream, natsConnect } from './support/nats.js';
import { freshOutbox, testPool, until } from './support/pg.js';
import { byKey, produce } from './support/producers.js';

// Child processes start through tsx: on a loaded 2-core machine each start can take seconds.
vi.setConfig({ testTimeout: 120_000 });

let pool: pg.Pool;
let nc: NatsConnection;
let box: Awaited<ReturnType<typeof freshOutbox>>;
let stream: Awaited<ReturnType<typeof freshStream>>;
const workers: Worker[] = [];

beforeAll(async () => {
  await requireService('postgres');
  await requireService('nats');
  pool = testPool(10);
  nc = await natsConnect();
  box = await freshOutbox(pool, 'stormnats');
  stream = await freshStream(nc, 'stormnats');
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await stream?.drop();
  await box?.drop();
  await pool?.end();
  await nc?.close();
});

it('10,000 events from concurrent transactions through 3 relay processes, one SIGKILLed mid-batch and restarted: every committed event exactly once in the stream, none rolled back, order per key', async () => {
  const relayConfig = { schema: box.schema, broker: 'nats', leaseMs: 3_000, batchSize: 200 };
  workers.push(startWorker('relay', { ...relayConfig, stallAfter: 1_200 }));
  workers.push(startWorker('relay', relayConfig), startWorker('relay', relayConfig));
  await Promise.all(workers.map((w) => w.waitFor((e) => e.type === 'ready')));

  const outbox = new Outbox({ schema: box.schema });
  const producing = produce(pool, outbox, {
    total: 10_000,
    keys: 300,
    producers: 8,
    rollbackRate: 0.1,
    topic: `${stream.subject}.order`,
  });

  const victim = workers[0]!;
  await victim.waitFor((e) => e.type === 'stalled', 60_000);
  await victim.kill('SIGKILL');
  const replacement = startWorker('relay', relayConfig);
  workers.push(replacement);

  const produced = await producing;
  expect(produced.rolledBack).toBeGreaterThan(0);
  const committedCount = produced.committedIds.size;
  expect(committedCount + produced.rolledBack).toBe(10_000);

  await until(async () => (await outboxStats(pool, { schema: box.schema })).pending === 0, 90_000, 200);
  expect(await stream.count()).toBe(committedCount);
  // The rows of the killed relay's batch were published again, and the stream dropped the copies it had.
  await Promise.all(workers.slice(1).map((w) => w.kill('SIGTERM')));
  const lastProgress = (w: Worker) => w.events.filter((e) => e.type === 'progress').at(-1);
  const republished = workers.slice(1).reduce((sum, w) => sum + Number(lastProgress(w)?.duplicates ?? 0), 0);
  expect(republished).toBeGreaterThan(0);

  // Read the whole stream back in order.
  const js = jetstream(nc);
  const reader = await js.consumers.get(stream.name, { deliver_policy: DeliverPolicy.All });
  const messages = await reader.consume();
  const ids: string[] = [];
  const delivered: { key: string; seq: number }[] = [];
  for await (const message of messages) {
    ids.push(message.headers?.get('Nats-Msg-Id') ?? '');
    delivered.push(message.json<{ key: string; seq: number }>());
    if (delivered.length === committedCount) break;
  }
  await messages.close();
  expect(new Set(ids).size).toBe(committedCount);
  expect(new Set(ids)).toEqual(produced.committedIds);
  expect(byKey(delivered)).toEqual(produced.committed);
});
