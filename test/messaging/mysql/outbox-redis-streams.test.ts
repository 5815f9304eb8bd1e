import { Redis } from 'ioredis';
import type { PoolConnection } from 'mysql2/promise';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import {
  consumeIdempotently,
  FIELD,
  type StreamEntry,
} from '../../../src/messaging/brokers/redis-streams.js';
import type { InboxOutcome } from '../../../src/messaging/consumer.js';
import { Outbox, outboxStats } from '../../../src/messaging/outbox/index.js';
import { connectionOf, MySqlStore } from '../../../src/stores/mysql/index.js';
import { dropTable, uniqueTable } from '../../mysql/support.js';
import { requireService, services } from '../../support/services.js';
import { startWorker, type Worker } from '../support/children.js';
import { countOf, createTestOutbox, inTransaction, query, type TestOutbox, until } from './support.js';

// Child processes start through tsx: on a loaded 2-core machine each start can take seconds.
vi.setConfig({ testTimeout: 120_000 });

// The whole way on MySQL: events written in MySQL transactions (some rolled back), two relay processes on the MySQL
// outbox publishing to Redis Streams, one SIGKILLed in the middle of a batch, and an inbox on a transactional
// MySqlStore applying each event's effect in the same transaction as its inbox record.

let box: TestOutbox;
let redis: Redis;
let storeTable: string;
const stream = `oncely-mysql-outbox-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const workers: Worker[] = [];

beforeAll(async () => {
  await requireService('redis');
  box = await createTestOutbox('redis', 'mysql2', { size: 12 });
  redis = new Redis({ port: services.redis.port });
  storeTable = uniqueTable('outbox_inbox');
  await new MySqlStore({ pool: box.pool, table: storeTable }).migrate();
  await query(
    box.pool,
    `CREATE TABLE \`${box.schema}\`.effects (id VARCHAR(32) PRIMARY KEY, k VARCHAR(32), seq INT)`,
  );
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  await redis?.del(stream, `${stream}:dead`);
  redis?.disconnect();
  if (box !== undefined) await dropTable(box.pool, storeTable);
  await box?.drop();
});

/** Concurrent producers, 1–3 events per transaction, a tenth rolled back; each key belongs to one producer. */
async function produce(total: number, keys: number, producers: number) {
  const outbox = new Outbox({ schema: box.schema });
  const committed = new Map<string, number[]>();
  const committedIds = new Set<string>();
  const nextSeq = new Map<string, number>();
  let reserved = 0;
  let rolledBack = 0;
  const producer = async (p: number) => {
    const own = Array.from({ length: keys / producers }, (_, i) => `key-${p + i * producers}`);
    while (reserved < total) {
      const count = Math.min(total - reserved, 1 + Math.floor(Math.random() * 3));
      reserved += count;
      const events = Array.from({ length: count }, () => {
        const key = own[Math.floor(Math.random() * own.length)]!;
        const seq = nextSeq.get(key) ?? 0;
        nextSeq.set(key, seq + 1);
        return { topic: 'order', key, payload: { key, seq } };
      });
      const rollback = Math.random() < 0.1;
      const ids = await inTransaction(box.pool, async (connection) => {
        const written = await outbox.addMany(connection, events);
        if (rollback) throw new Error('rolled back');
        return written;
      }).catch(() => undefined);
      if (ids === undefined) {
        rolledBack += count;
        continue;
      }
      for (const id of ids) committedIds.add(id);
      for (const { key, payload } of events) committed.set(key, [...(committed.get(key) ?? []), payload.seq]);
    }
  };
  await Promise.all(Array.from({ length: producers }, (_, p) => producer(p)));
  return { committed, committedIds, rolledBack };
}

it('two relay processes, one SIGKILLed mid-batch: every committed event in the stream (duplicates only of that batch), none rolled back, each key in commit order; a transactional MySQL inbox applies each once', async () => {
  const relayConfig = { driver: 'mariadb', schema: box.schema, stream, leaseMs: 1_500, batchSize: 50 };
  const victim = startWorker('../mysql/workers/relay', { ...relayConfig, stallAfter: 80 });
  const steady = startWorker('../mysql/workers/relay', relayConfig);
  workers.push(victim, steady);
  await Promise.all(workers.map((w) => w.waitFor((e) => e.type === 'ready')));

  const producing = produce(600, 30, 6);
  await victim.waitFor((e) => e.type === 'stalled', 60_000);
  await victim.kill('SIGKILL');
  const replacement = startWorker('../mysql/workers/relay', relayConfig);
  workers.push(replacement);
  const produced = await producing;
  expect(produced.rolledBack).toBeGreaterThan(0);

  await until(async () => (await outboxStats(box.pool, { schema: box.schema })).pending === 0, 60_000, 100);
  await Promise.all([steady.kill('SIGTERM'), replacement.kill('SIGTERM')]);

  const entries = (await redis.xrangeBuffer(stream, '-', '+')) as [Buffer, Buffer[]][];
  const field = (fields: Buffer[], name: string) => {
    const at = fields.findIndex((f, i) => i % 2 === 0 && f.toString() === name);
    return fields[at + 1]!;
  };
  const ids = entries.map(([, fields]) => field(fields, FIELD.id).toString());
  // At least once: every committed event, nothing rolled back; the killed relay's batch went out again.
  expect(new Set(ids)).toEqual(produced.committedIds);
  expect(ids.length).toBeGreaterThan(produced.committedIds.size);
  // Deduplicated by outbox id (first copy kept), each key is in commit order.
  const seen = new Set<string>();
  const delivered = new Map<string, number[]>();
  for (const [i, [, fields]] of entries.entries()) {
    if (seen.has(ids[i]!)) continue;
    seen.add(ids[i]!);
    const { key, seq } = JSON.parse(field(fields, FIELD.payload).toString()) as { key: string; seq: number };
    delivered.set(key, [...(delivered.get(key) ?? []), seq]);
  }
  expect(delivered).toEqual(produced.committed);

  // Downstream, an inbox whose records and effects commit together in MySQL applies each event once.
  const store = new MySqlStore({ pool: box.pool, table: storeTable }).transactional();
  const outcomes: InboxOutcome<unknown>[] = [];
  const client = redis.duplicate();
  const consumer = await consumeIdempotently(
    async (entry: StreamEntry, context) => {
      const { key, seq } = JSON.parse(entry.payload.toString()) as { key: string; seq: number };
      await connectionOf<PoolConnection>(context).query(
        `INSERT INTO \`${box.schema}\`.effects (id, k, seq) VALUES (?, ?, ?)`,
        [entry.id, key, seq],
      );
    },
    { client, stream, group: 'ledger', store, count: 8, blockMs: 50, onOutcome: (o) => outcomes.push(o) },
  );
  try {
    await until(() => outcomes.length === entries.length, 60_000);
  } finally {
    await consumer.stop();
    client.disconnect();
  }
  expect(outcomes.filter((o) => o.kind === 'processed')).toHaveLength(produced.committedIds.size);
  expect(outcomes.filter((o) => o.kind === 'duplicate')).toHaveLength(
    entries.length - produced.committedIds.size,
  );
  expect(await countOf(box.pool, `\`${box.schema}\`.effects`)).toBe(produced.committedIds.size);
});
