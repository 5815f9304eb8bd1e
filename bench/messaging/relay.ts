// Relay throughput to each broker (a backlog drained by one relay, against the same publisher sending directly:
// what the broker takes from one client) and commit-to-publish latency under a steady producer.
import { performance } from 'node:perf_hooks';
import { Outbox, OutboxRelay } from '../../src/messaging/outbox/index.js';
import type { OutboxMessage, Publisher } from '../../src/messaging/publisher.js';
import { type BrokerTarget, type outboxDatabase, percentile } from './fixtures.js';

type Database = Awaited<ReturnType<typeof outboxDatabase>>;

export interface ThroughputSample {
  readonly perSec: number;
  readonly cpuUsPerEvent: number;
}

export interface LatencySample {
  readonly ratePerSec: number;
  readonly eventsPerTransaction: number;
  readonly achievedPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly samples: number;
}

/** A publisher wrapper that counts confirmations and notes when each one came back. */
function counting(inner: Publisher) {
  const confirmedAt = new Map<string, number>();
  let confirmed = 0;
  let onConfirm = () => {};
  const publisher: Publisher = {
    name: inner.name,
    delivery: inner.delivery,
    async publish(message, signal) {
      await inner.publish(message, signal);
      confirmedAt.set(message.id, performance.now());
      confirmed++;
      onConfirm();
    },
  };
  return {
    publisher,
    confirmedAt,
    get confirmed() {
      return confirmed;
    },
    until(count: number) {
      return new Promise<void>((resolve) => {
        onConfirm = () => {
          if (confirmed >= count) resolve();
        };
        onConfirm();
      });
    },
  };
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

export async function fillBacklog(db: Database, topic: string, total: number, keys: number): Promise<void> {
  const outbox = new Outbox({ schema: db.schema, notify: false });
  for (let start = 0; start < total; start += 1_000) {
    await outbox.addMany(
      db.pool,
      Array.from({ length: Math.min(1_000, total - start) }, (_, i) => {
        const n = start + i;
        return { topic, key: `order-${n % keys}`, payload: { n, amount: 1250, currency: 'EUR' } };
      }),
    );
  }
  // Fresh statistics, as autovacuum would have them on a table that lives this long.
  await db.pool.query(`ANALYZE ${db.table}`);
}

/** One relay drains a backlog of `total` rows; events/s from its start to the last confirmation. */
export async function relayThroughput(
  db: Database,
  target: BrokerTarget,
  total: number,
  keys: number,
  batchSize: number,
  relays = 1,
): Promise<ThroughputSample> {
  await fillBacklog(db, target.topic, total, keys);
  const counter = counting(target.publisher);
  const running = Array.from(
    { length: relays },
    () =>
      new OutboxRelay({
        pool: db.pool,
        schema: db.schema,
        publisher: counter.publisher,
        batchSize,
        listen: false,
        minPollMs: 1,
      }),
  );
  const cpuBefore = cpuMicros();
  const started = performance.now();
  await Promise.all(running.map((relay) => relay.start()));
  await counter.until(total);
  const elapsed = performance.now() - started;
  const cpu = cpuMicros() - cpuBefore;
  await Promise.all(running.map((relay) => relay.stop()));
  return { perSec: (total / elapsed) * 1000, cpuUsPerEvent: cpu / total };
}

/** The same messages published straight to the broker by the same publisher, 256 in flight: the ceiling. */
export async function directThroughput(
  target: BrokerTarget,
  total: number,
  concurrency: number,
): Promise<ThroughputSample> {
  const payload = Buffer.from(JSON.stringify({ n: 0, amount: 1250, currency: 'EUR' }));
  const runId = Math.random().toString(36).slice(2, 8);
  let next = 0;
  const cpuBefore = cpuMicros();
  const started = performance.now();
  const signal = new AbortController().signal;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let n = next++; n < total; n = next++) {
        const message: OutboxMessage = {
          id: `direct-${runId}-${n}`,
          topic: target.topic,
          key: `order-${n}`,
          payload,
          contentType: 'application/json',
          headers: {},
          attempt: 1,
          createdAt: new Date(),
        };
        await target.publisher.publish(message, signal);
      }
    }),
  );
  const elapsed = performance.now() - started;
  return { perSec: (total / elapsed) * 1000, cpuUsPerEvent: (cpuMicros() - cpuBefore) / total };
}

/**
 * Producers commit `ratePerSec` events per second (in transactions of `perTransaction` events, over 8
 * connections of `producers`, a pool apart from the relay's) while a relay with LISTEN/NOTIFY runs; latency is
 * from the producer's COMMIT returning to the broker's confirmation reaching the relay.
 */
export async function commitToPublishLatency(
  db: Database,
  producerPool: Database['pool'],
  target: BrokerTarget,
  ratePerSec: number,
  perTransaction: number,
  durationMs: number,
): Promise<LatencySample> {
  const counter = counting(target.publisher);
  const relay = new OutboxRelay({
    pool: db.pool,
    schema: db.schema,
    publisher: counter.publisher,
    batchSize: 500,
  });
  await relay.start();
  const outbox = new Outbox({ schema: db.schema });
  const committedAt = new Map<string, number>();
  const producers = 8;
  const intervalMs = (1000 * producers * perTransaction) / ratePerSec;
  const started = performance.now();
  let produced = 0;
  await Promise.all(
    Array.from({ length: producers }, async (_, p) => {
      const client = await producerPool.connect();
      try {
        for (let tick = 0; ; tick++) {
          const due = started + p * (intervalMs / producers) + tick * intervalMs;
          if (due - started >= durationMs) break;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          await client.query('BEGIN');
          const ids = await outbox.addMany(
            client,
            Array.from({ length: perTransaction }, (_, i) => ({
              topic: target.topic,
              key: `account-${(p * 1_000 + tick * perTransaction + i) % 5_000}`,
              payload: { p, tick, i, amount: 1250 },
            })),
          );
          await client.query('COMMIT');
          const now = performance.now();
          for (const id of ids) committedAt.set(id, now);
          produced += ids.length;
        }
      } finally {
        client.release();
      }
    }),
  );
  const producedIn = performance.now() - started;
  await counter.until(produced);
  await relay.stop();
  const latencies = [...committedAt].map(([id, at]) =>
    Math.max(0, (counter.confirmedAt.get(id) ?? Number.NaN) - at),
  );
  return {
    ratePerSec,
    eventsPerTransaction: perTransaction,
    achievedPerSec: (produced / producedIn) * 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    samples: latencies.length,
  };
}
