import { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import {
  consumeIdempotently,
  FIELD,
  RedisPubSubNotifier,
  RedisStreamsPublisher,
  type StreamEntry,
} from '../../src/messaging/brokers/redis-streams.js';
import type { InboxOutcome } from '../../src/messaging/consumer.js';
import {
  listDeadLetters,
  Outbox,
  OutboxRelay,
  outboxStats,
  type RelayEvent,
} from '../../src/messaging/outbox/index.js';
import type { OutboxMessage } from '../../src/messaging/publisher.js';
import { requireService, services } from '../support/services.js';
import { DisposableRedis } from './support/disposable-redis.js';
import { freshOutbox, testPool, until } from './support/pg.js';

const prefix = `oncely-msg-streams-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
let redis: Redis;

beforeAll(async () => {
  await requireService('redis');
  redis = new Redis({ port: services.redis.port });
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis?.disconnect();
});

const message = (id: string, extra: Partial<OutboxMessage> = {}): OutboxMessage => ({
  id,
  topic: 'payment.created',
  key: 'acct-1',
  payload: Buffer.from([0, 1, 2, 255]),
  contentType: 'application/octet-stream',
  headers: { traceparent: '00-a-b-01' },
  attempt: 1,
  createdAt: new Date(),
  ...extra,
});

describe('RedisStreamsPublisher', () => {
  it('XADDs the outbox id, topic, key, headers and binary payload as fields', async () => {
    const stream = `${prefix}:pub`;
    await new RedisStreamsPublisher({ client: redis, stream: () => stream }).publish(message('77'));
    const entries = (await redis.xrangeBuffer(stream, '-', '+')) as unknown as [Buffer, Buffer[]][];
    const fields = entries[0]![1];
    const map = new Map<string, Buffer>();
    for (let i = 0; i < fields.length; i += 2) map.set(String(fields[i]), fields[i + 1]!);
    expect(String(map.get(FIELD.id))).toBe('77');
    expect(String(map.get(FIELD.topic))).toBe('payment.created');
    expect(String(map.get(FIELD.key))).toBe('acct-1');
    expect(JSON.parse(String(map.get(FIELD.headers)))).toEqual({ traceparent: '00-a-b-01' });
    expect(map.get(FIELD.payload)).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it('the pub/sub notifier is at-most-once: a message with no subscriber connected is simply gone', async () => {
    const channel = `${prefix}:notify`;
    const notifier = new RedisPubSubNotifier({ client: redis, channel: () => channel });
    expect(notifier.delivery).toBe('at-most-once');
    await notifier.publish(message('lost', { payload: Buffer.from('first') }));
    const subscriber = redis.duplicate();
    const received: string[] = [];
    await subscriber.subscribe(channel);
    subscriber.on('message', (_channel, text) => received.push(text));
    await notifier.publish(message('seen', { payload: Buffer.from('second') }));
    await until(() => received.length === 1);
    expect(received).toEqual(['second']);
    subscriber.disconnect();
  });
});

describe('consumeIdempotently (Redis Streams consumer group)', () => {
  it('acks once the outcome is stored, drops duplicate entries of one outbox id, claims entries of a vanished consumer, dead-letters parked ones', async () => {
    const stream = `${prefix}:group`;
    const group = 'ledger';
    const publisher = new RedisStreamsPublisher({ client: redis, stream: () => stream });
    await redis.xgroup('CREATE', stream, group, '0', 'MKSTREAM');
    for (let i = 0; i < 10; i++) await publisher.publish(message(`e${i}`, { payload: Buffer.from(`p${i}`) }));
    // A consumer reads three entries and vanishes without acknowledging them.
    await redis.xreadgroup('GROUP', group, 'ghost', 'COUNT', 3, 'STREAMS', stream, '>');
    // A relay retry: the same outbox message appended again.
    await publisher.publish(message('e5', { payload: Buffer.from('p5') }));
    await publisher.publish(message('poison', { payload: Buffer.from('bad') }));

    const applied: string[] = [];
    const outcomes: InboxOutcome<unknown>[] = [];
    const client = redis.duplicate();
    const consumer = await consumeIdempotently(
      async (entry: StreamEntry) => {
        if (entry.payload.toString() === 'bad') throw new Error('unparseable');
        applied.push(entry.payload.toString());
      },
      {
        client,
        stream,
        group,
        consumer: 'live',
        store: new MemoryStore(),
        claimIdleMs: 100,
        blockMs: 50,
        maxAttempts: 2,
        onOutcome: (outcome) => outcomes.push(outcome),
      },
    );
    try {
      await until(() => applied.length === 10 && outcomes.some((o) => o.kind === 'parked'), 20_000);
      await until(async () => Number((await redis.xpending(stream, group))[0]) === 0);
    } finally {
      await consumer.stop();
      client.disconnect();
    }
    expect(applied.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `p${i}`).sort());
    expect(outcomes.filter((o) => o.kind === 'duplicate')).toHaveLength(1);
    const dead = (await redis.xrange(`${stream}:dead`, '-', '+')) as [string, string[]][];
    expect(dead).toHaveLength(1);
    expect(dead[0]![1]).toEqual(expect.arrayContaining([FIELD.id, 'poison', 'oncely-outcome', 'parked']));
  });
});

describe('relay to Redis Streams: broker outage and a poison event', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    await requireService('postgres');
    pool = testPool(4);
  });
  afterAll(() => pool?.end());

  it('while the broker is down the backlog grows and retries back off; delivery resumes when it returns', async () => {
    const box = await freshOutbox(pool, 'outage');
    const server = await DisposableRedis.start();
    const client = new Redis({
      port: server.port,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 100,
    });
    client.on('error', () => {});
    await new Promise((resolve) => client.once('ready', resolve));
    const stream = 'events';
    const events: RelayEvent[] = [];
    const relay = new OutboxRelay({
      pool,
      schema: box.schema,
      publisher: new RedisStreamsPublisher({ client, stream: () => stream }),
      backoff: { initialMs: 50, maxMs: 800 },
      maxAttempts: 2,
      publishTimeoutMs: 500,
      onEvent: (event) => events.push(event),
    });
    const outbox = new Outbox({ schema: box.schema });
    try {
      await relay.start();
      await outbox.addMany(
        pool,
        Array.from({ length: 10 }, (_, i) => ({ topic: 'e', key: `k${i % 4}`, payload: { i } })),
      );
      await until(async () => (await client.xlen(stream)) === 10);

      await server.stop();
      const backlog: number[] = [];
      for (let round = 0; round < 5; round++) {
        await outbox.addMany(
          pool,
          Array.from({ length: 40 }, (_, i) => ({ topic: 'e', key: `k${i % 4}`, payload: { round, i } })),
        );
        await new Promise((resolve) => setTimeout(resolve, 250));
        backlog.push((await outboxStats(pool, { schema: box.schema })).pending);
      }
      expect(backlog).toEqual([...backlog].sort((a, b) => a - b));
      expect(backlog.at(-1)).toBe(200);
      const pauses = events.flatMap((e) => (e.type === 'outage' ? [e.pauseMs] : []));
      expect(pauses.length).toBeGreaterThanOrEqual(3);
      pauses.forEach((pause, i) => {
        expect(pause).toBeGreaterThanOrEqual(Math.min(800, 50 * 2 ** i) / 2);
      });
      // Attempts rose past maxAttempts during the outage, yet nothing was dead-lettered: the broker was down.
      const during = await outboxStats(pool, { schema: box.schema });
      expect(during.maxAttempts).toBeGreaterThan(2);
      expect(during.dead).toBe(0);

      await server.start();
      await until(async () => (await outboxStats(pool, { schema: box.schema })).pending === 0, 30_000);
      const entries = (await client.xrange(stream, '-', '+')) as [string, string[]][];
      const ids = new Set(entries.map(([, fields]) => fields[fields.indexOf(FIELD.id) + 1]));
      expect(ids.size).toBe(200);
      expect((await outboxStats(pool, { schema: box.schema })).dead).toBe(0);
    } finally {
      await relay.stop();
      client.disconnect();
      await server.stop();
      await box.drop();
    }
  });

  it('a poison event (the broker refuses it) is dead-lettered without stopping other keys', async () => {
    const box = await freshOutbox(pool, 'poison');
    const good = `${prefix}:good`;
    const wrongType = `${prefix}:not-a-stream`;
    await redis.set(wrongType, 'a string: XADD answers WRONGTYPE');
    const relay = new OutboxRelay({
      pool,
      schema: box.schema,
      publisher: new RedisStreamsPublisher({
        client: redis,
        stream: (m) => (m.topic === 'poison' ? wrongType : good),
      }),
      backoff: { initialMs: 10, maxMs: 40 },
      maxAttempts: 3,
      minPollMs: 5,
    });
    const outbox = new Outbox({ schema: box.schema });
    try {
      await relay.start();
      const poisonId = await outbox.add(pool, { topic: 'poison', key: 'acct-9', payload: { bad: true } });
      // Other keys keep flowing the whole time (and give the relay evidence the broker is up).
      for (let i = 0; i < 60; i++) {
        await outbox.add(pool, { topic: 'fine', key: `acct-${i % 5}`, payload: { i } });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await until(async () => (await listDeadLetters(pool, { schema: box.schema })).length === 1);
      await until(async () => (await redis.xlen(good)) === 60);
      const [dead] = await listDeadLetters(pool, { schema: box.schema });
      expect(dead?.id).toBe(poisonId);
      // At least maxAttempts: a failure while the poison was alone in its batch is not held against it.
      expect(dead?.attempts).toBeGreaterThanOrEqual(3);
      expect(dead?.lastError).toContain('WRONGTYPE');
      // Its own key is free again once it is set aside.
      await outbox.add(pool, { topic: 'fine', key: 'acct-9', payload: { after: true } });
      await until(async () => (await redis.xlen(good)) === 61);
    } finally {
      await relay.stop();
      await box.drop();
    }
  });
});
