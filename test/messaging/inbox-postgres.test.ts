import amqp, { type Channel, type ChannelModel } from 'amqplib';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { requireService, services } from '../support/services.js';
import { crashOneConsumer, startWorker, type Worker } from './support/children.js';
import { testPool, until } from './support/pg.js';

// Child processes start through tsx: on a loaded 2-core machine each start can take seconds.
vi.setConfig({ testTimeout: 120_000 });

// The transactional inbox: a PostgresStore in transactional mode makes the inbox record and the handler's own
// writes one transaction, so a consumer killed at any point (even right after writing its effect) leaves neither.

const tag = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const schema = `oncely_msg_inbox_${tag}`;
let connection: ChannelModel;
let channel: Channel;
let pool: pg.Pool;
const queues: string[] = [];
const workers: Worker[] = [];

beforeAll(async () => {
  await requireService('rabbitmq');
  await requireService('postgres');
  connection = await amqp.connect(services.rabbitmq.url);
  channel = await connection.createChannel();
  pool = testPool(4);
  await new PostgresStore({ pool, schema }).migrate();
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  for (const queue of queues) await channel.deleteQueue(queue).catch(() => {});
  await connection?.close();
  await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool?.end();
});

async function freshQueue(label: string, deadLetterQueue?: string): Promise<string> {
  const queue = `oncely_${label}_${tag}`;
  const args = deadLetterQueue
    ? { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': deadLetterQueue }
    : {};
  await channel.assertQueue(queue, { durable: true, arguments: args });
  queues.push(queue);
  return queue;
}

async function send(queue: string, ids: readonly string[], copies: number): Promise<void> {
  const confirm = await connection.createConfirmChannel();
  for (const id of ids) {
    for (let copy = 0; copy < copies; copy++)
      confirm.sendToQueue(queue, Buffer.from(id), { messageId: id, persistent: true });
  }
  await confirm.waitForConfirms();
  await confirm.close();
}

const effectCounts = async (table: string) =>
  (
    await pool.query(
      `SELECT count(*)::int AS applied, count(DISTINCT id)::int AS distinct_ids, count(DISTINCT pid)::int AS processes FROM "${schema}".${table}`,
    )
  ).rows[0] as { applied: number; distinct_ids: number; processes: number };

it('every message twice, a consumer SIGKILLed right after writing its effect inside the transaction: each effect exactly once', async () => {
  const queue = await freshQueue('txkill');
  await pool.query(`CREATE TABLE "${schema}".effects_kill (id text NOT NULL, pid integer)`);
  const total = 300;
  await send(
    queue,
    Array.from({ length: total }, (_, i) => `m-${i}`),
    2,
  );

  const config = { queue, store: 'postgres-tx', schema, effects: `"${schema}".effects_kill`, leaseMs: 1_000 };
  // The victim handles many messages at once: every transaction it had open rolls back with it.
  const { steady, replacement } = await crashOneConsumer(workers, config, { stallAt: 40, prefetch: 20 });

  await until(
    async () => {
      const { distinct_ids } = await effectCounts('effects_kill');
      const { messageCount } = await channel.checkQueue(queue);
      return distinct_ids === total && messageCount === 0;
    },
    90_000,
    100,
  );
  await Promise.all([steady.kill('SIGTERM'), replacement.kill('SIGTERM')]);
  const counts = await effectCounts('effects_kill');
  expect(counts).toMatchObject({ applied: total, distinct_ids: total });
  // The victim's own effects committed before it died are kept (and counted once); the one it wrote just before
  // the kill was rolled back and applied again by another process.
  expect(counts.processes).toBeGreaterThanOrEqual(2);
});

it('a message that crashes its consumer every time is parked after maxAttempts and dead-lettered; the others apply once', async () => {
  const deadLetters = await freshQueue('txdead');
  const queue = await freshQueue('txcrash', deadLetters);
  await pool.query(`CREATE TABLE "${schema}".effects_crash (id text NOT NULL, pid integer)`);
  const ids = Array.from({ length: 50 }, (_, i) => `c-${i}`);
  await send(queue, [...ids.slice(0, 25), 'crash-me', ...ids.slice(25)], 1);

  const config = {
    queue,
    store: 'postgres-tx',
    schema,
    effects: `"${schema}".effects_crash`,
    leaseMs: 1_000,
    maxAttempts: 3,
    crashOn: 'crash-me',
    prefetch: 5,
  };
  let crashes = 0;
  for (let restart = 0; restart < 8; restart++) {
    const worker = startWorker('consumer', config);
    workers.push(worker);
    await worker.waitFor((e) => e.type === 'ready');
    const settled = await Promise.race([
      worker.waitFor((e) => e.type === 'crashing', 20_000).then(() => 'crashed' as const),
      until(async () => (await channel.checkQueue(deadLetters)).messageCount === 1, 60_000).then(
        () => 'parked' as const,
      ),
    ]);
    if (settled === 'parked') {
      await until(async () => (await effectCounts('effects_crash')).distinct_ids === ids.length, 30_000);
      await worker.kill('SIGTERM');
      break;
    }
    crashes++;
    await worker.kill('SIGKILL');
  }
  expect(crashes).toBe(3);
  // Only the guilty message is parked: the ones in flight with it when it crashed were redelivered and ran alone.
  expect((await channel.checkQueue(deadLetters)).messageCount).toBe(1);
  const dead = await channel.get(deadLetters, { noAck: true });
  if (dead === false) throw new Error('the dead-letter queue is empty');
  expect(dead.properties.messageId).toBe('crash-me');
  expect(await effectCounts('effects_crash')).toMatchObject({
    applied: ids.length,
    distinct_ids: ids.length,
  });
});
