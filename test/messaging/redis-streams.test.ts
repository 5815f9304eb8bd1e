import { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import {
  autoClaimEntries,
  readGroupEntries,
  UnexpectedReplyError,
} from '../../src/messaging/brokers/redis-streams/replies.js';
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
import { startRedis, stopAll, storeClient } from '../redis/support/redis-server.js';
import { requireService, services } from '../support/services.js';
import { freshOutbox, testPool, until } from './support/pg.js';
import { acksOnlyWhatIsStored, outageInboxOptions } from './support/store-outage.js';

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

describe('consumeIdempotently: reply protocols, readiness, errors', () => {
  const protocols = [
    { name: 'RESP3, the ioredis 6 default', options: {} },
    { name: 'RESP3 with replyMapping resp3', options: { replyMapping: 'resp3' as const } },
    { name: 'RESP2', options: { protocol: 2 as const } },
  ];

  for (const { name, options } of protocols) {
    it(`${name}: with the consumer's defaults a new entry is handled within a second`, async () => {
      const stream = `${prefix}:defaults:${name}`;
      const client = new Redis({ port: services.redis.port, ...options });
      const handledAt: number[] = [];
      const errors: unknown[] = [];
      // Defaults: blockMs 2 s, claimIdleMs 30 s. Only XREADGROUP can deliver within the second.
      const consumer = await consumeIdempotently(
        async () => {
          handledAt.push(Date.now());
        },
        { client, stream, group: 'g', store: new MemoryStore(), onError: (error) => errors.push(error) },
      );
      try {
        // Let the first read block, as it would on a quiet stream.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const sentAt = Date.now();
        await new RedisStreamsPublisher({ client: redis, stream: () => stream }).publish(
          message(`${name}-1`),
        );
        await until(() => handledAt.length === 1, 5_000, 5);
        expect(handledAt[0]! - sentAt).toBeLessThan(1_000);
        await until(async () => Number((await redis.xpending(stream, 'g'))[0]) === 0, 5_000, 5);
        expect(errors).toEqual([]);
      } finally {
        await consumer.stop();
        client.disconnect();
      }
    });

    it(`${name}: entries left pending by a vanished consumer are claimed and handled`, async () => {
      const stream = `${prefix}:claim:${name}`;
      await redis.xgroup('CREATE', stream, 'g', '0', 'MKSTREAM');
      const publisher = new RedisStreamsPublisher({ client: redis, stream: () => stream });
      for (let i = 0; i < 3; i++) await publisher.publish(message(`${name}-c${i}`));
      await redis.xreadgroup('GROUP', 'g', 'ghost', 'COUNT', 3, 'STREAMS', stream, '>');
      const client = new Redis({ port: services.redis.port, ...options });
      const outcomes: InboxOutcome<unknown>[] = [];
      const errors: unknown[] = [];
      const consumer = await consumeIdempotently(async () => 'done', {
        client,
        stream,
        group: 'g',
        store: new MemoryStore(),
        claimIdleMs: 50,
        blockMs: 50,
        onOutcome: (outcome) => outcomes.push(outcome),
        onError: (error) => errors.push(error),
      });
      try {
        await until(() => outcomes.length === 3);
        await until(async () => Number((await redis.xpending(stream, 'g'))[0]) === 0);
      } finally {
        await consumer.stop();
        client.disconnect();
      }
      expect(outcomes.map((o) => o.kind)).toEqual(['processed', 'processed', 'processed']);
      expect(errors).toEqual([]);
    });
  }

  it('acks only what the store recorded: while complete fails or hangs the entry stays pending, then is processed once', async () => {
    const stream = `${prefix}:outage`;
    const client = redis.duplicate();
    try {
      await acksOnlyWhatIsStored({
        start: (store, handler, onOutcome) =>
          consumeIdempotently(async () => handler(), {
            client,
            stream,
            group: 'g',
            store,
            claimIdleMs: 100,
            blockMs: 50,
            onOutcome,
            ...outageInboxOptions,
          }),
        send: () =>
          new RedisStreamsPublisher({ client: redis, stream: () => stream }).publish(message('outage-1')),
        drained: async () => Number((await redis.xpending(stream, 'g'))[0]) === 0,
      });
    } finally {
      client.disconnect();
    }
  });

  it('a throwing onOutcome is reported through onError; the other entries of its batch are still seen', async () => {
    const stream = `${prefix}:hook`;
    const client = redis.duplicate();
    const seen: string[] = [];
    const reported: { error: unknown; operation: string }[] = [];
    const publisher = new RedisStreamsPublisher({ client: redis, stream: () => stream });
    for (const id of ['a', 'b', 'c']) await publisher.publish(message(`hook-${id}`));
    const consumer = await consumeIdempotently(async () => {}, {
      client,
      stream,
      group: 'g',
      store: new MemoryStore(),
      onOutcome: (_, entry) => {
        seen.push(entry.id);
        if (entry.id === 'hook-a') throw new Error('metrics backend down');
      },
      onError: (error, operation) => reported.push({ error, operation }),
    });
    try {
      await until(() => seen.length === 3);
      await until(async () => Number((await redis.xpending(stream, 'g'))[0]) === 0);
    } finally {
      await consumer.stop();
      client.disconnect();
    }
    expect(seen.sort()).toEqual(['hook-a', 'hook-b', 'hook-c']);
    expect(reported.map((r) => r.operation)).toEqual(['onOutcome']);
    expect(String(reported[0]!.error)).toContain('metrics backend down');
  });

  it('reads the replies of every protocol, entries deleted while pending included; refuses a shape it does not know', async () => {
    for (const { name, options } of protocols) {
      const stream = `${prefix}:shapes:${name}`;
      const client = new Redis({ port: services.redis.port, ...options });
      try {
        await client.xgroup('CREATE', stream, 'g', '0', 'MKSTREAM');
        const publisher = new RedisStreamsPublisher({ client: redis, stream: () => stream });
        await publisher.publish(message('kept'));
        await publisher.publish(message('gone'));
        const fresh = readGroupEntries(
          stream,
          await client.callBuffer('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', stream, '>'),
        );
        expect({ name, ids: fresh.entries.map((e) => e.id), deleted: fresh.deleted }).toEqual({
          name,
          ids: ['kept', 'gone'],
          deleted: [],
        });
        expect(fresh.entries[0]!.payload).toEqual(Buffer.from([0, 1, 2, 255]));
        // Deleted while pending: the pending list's history answers [id, nil] for it.
        await redis.xdel(stream, fresh.entries[1]!.entryId);
        const history = readGroupEntries(
          stream,
          await client.callBuffer('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', stream, '0'),
        );
        expect({ name, ids: history.entries.map((e) => e.id), deleted: history.deleted }).toEqual({
          name,
          ids: ['kept'],
          deleted: [fresh.entries[1]!.entryId],
        });
        const claimed = autoClaimEntries(
          stream,
          await client.callBuffer('XAUTOCLAIM', stream, 'g', 'other', 0, '0-0'),
        );
        expect({ name, cursor: claimed.cursor, ids: claimed.entries.map((e) => e.id) }).toEqual({
          name,
          cursor: '0-0',
          ids: ['kept'],
        });
        expect(readGroupEntries(stream, null)).toEqual({ entries: [], deleted: [] });
      } finally {
        client.disconnect();
      }
    }
    expect(() => readGroupEntries('s', 42)).toThrow(UnexpectedReplyError);
    expect(() => readGroupEntries('s', [['s', [['1-0', 'not a field list']]]])).toThrow(UnexpectedReplyError);
    expect(() => autoClaimEntries('s', ['0-0'])).toThrow(/unexpected XAUTOCLAIM reply/);
  });

  it('waits for a client that is not connected yet (lazyConnect, no offline queue)', async () => {
    const stream = `${prefix}:lazy`;
    const client = new Redis({ port: services.redis.port, lazyConnect: true, enableOfflineQueue: false });
    const handled: string[] = [];
    const consumer = await consumeIdempotently(
      async (entry) => {
        handled.push(entry.id);
      },
      { client, stream, group: 'g', store: new MemoryStore() },
    );
    try {
      await new RedisStreamsPublisher({ client: redis, stream: () => stream }).publish(message('lazy-1'));
      await until(() => handled.length === 1, 5_000);
    } finally {
      await consumer.stop();
      client.disconnect();
    }
    expect(handled).toEqual(['lazy-1']);
  });

  it('reports loop errors through onError (or one process warning), and resumes when Redis is back', async () => {
    const server = await startRedis();
    const stream = 'events';
    const connect = () => {
      const client = new Redis({ port: server.port, retryStrategy: () => 50, maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      return client;
    };
    const reported: { error: unknown; operation: string }[] = [];
    const handled: string[] = [];
    const warnings: Error[] = [];
    const onWarning = (warning: Error & { code?: string }) => {
      if (warning.code === 'ONCELY_CONSUMER_ERROR') warnings.push(warning);
    };
    process.on('warning', onWarning);
    const clients = [connect(), connect(), connect()];
    const [withHook, silent, producer] = clients as [Redis, Redis, Redis];
    const options = { stream, group: 'g', blockMs: 100 };
    const consumers = [
      await consumeIdempotently(async (entry) => void handled.push(entry.id), {
        ...options,
        store: new MemoryStore(),
        client: withHook,
        onError: (error, operation) => reported.push({ error, operation }),
      }),
      // No onError: a run of failures is one process warning, not one per retry.
      await consumeIdempotently(async () => {}, {
        ...options,
        group: 'other',
        store: new MemoryStore(),
        client: silent,
      }),
    ];
    try {
      await server.kill();
      await until(() => reported.length >= 1 && warnings.length >= 1, 15_000);
      expect(reported[0]?.operation).toBe('read');
      // While Redis is down the loop waits for the client to be ready: no spinning, and no warning per retry.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(warnings).toHaveLength(1);
      expect(reported.length).toBeLessThanOrEqual(2);

      // Redis comes back empty (no persistence): the read fails with NOGROUP, the group is created again, and
      // new entries flow.
      await server.restart();
      await until(() => producer.status === 'ready', 15_000);
      await new RedisStreamsPublisher({ client: producer, stream: () => stream }).publish(message('after'));
      await until(() => handled.includes('after'), 15_000);
      expect(reported.some(({ error }) => String(error).includes('NOGROUP'))).toBe(true);
    } finally {
      process.off('warning', onWarning);
      await Promise.all(consumers.map((c) => c.stop()));
      for (const client of clients) client.disconnect();
      await stopAll([server]);
    }
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
    const server = await startRedis();
    const client = await storeClient(server.port, { reconnectMs: 100 });
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

      await server.kill();
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

      await server.restart();
      await until(async () => (await outboxStats(pool, { schema: box.schema })).pending === 0, 30_000);
      const entries = (await client.xrange(stream, '-', '+')) as [string, string[]][];
      const ids = new Set(entries.map(([, fields]) => fields[fields.indexOf(FIELD.id) + 1]));
      expect(ids.size).toBe(200);
      expect((await outboxStats(pool, { schema: box.schema })).dead).toBe(0);
    } finally {
      await relay.stop();
      client.disconnect();
      await stopAll([server]);
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
