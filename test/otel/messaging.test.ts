import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Inbox, type InboxOutcome, InvalidOptionsError, MemoryStore } from '../../src/index.js';
import {
  consumeIdempotently,
  RedisStreamsPublisher,
  type StreamEntry,
} from '../../src/messaging/brokers/redis-streams.js';
import { Outbox, OutboxRelay, type Publisher } from '../../src/messaging/outbox/index.js';
import { ATTR, METRIC, otel, SEMCONV } from '../../src/otel/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { freshOutbox, inTransaction, testPool, until } from '../messaging/support/pg.js';
import { requireService, services } from '../support/services.js';
import { isChildOf, named, only, points, recorded, sdk, total, within } from './support/sdk.js';

const tag = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const telemetry = sdk();
const instrumentation = otel({
  tracerProvider: telemetry.tracerProvider,
  meterProvider: telemetry.meterProvider,
});
let redis: Redis;
let pool: pg.Pool;
let outboxTable: Awaited<ReturnType<typeof freshOutbox>>;

beforeAll(async () => {
  await requireService('redis');
  await requireService('postgres');
  redis = new Redis({ host: '127.0.0.1', port: services.redis.port });
  pool = testPool();
  outboxTable = await freshOutbox(pool, 'otel');
});

afterAll(async () => {
  const keys = await redis.keys(`oncely-otel-${tag}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await outboxTable.drop();
  await pool.end();
  await telemetry.shutdown();
});

describe('a trace crosses outbox → Redis Streams → inbox', () => {
  it('the request that wrote the event is continued by the inbox; the relay publishes in a trace of its own, linked to it', async () => {
    const stream = `oncely-otel-${tag}:payments`;
    const outbox = new Outbox({ schema: outboxTable.schema, instrumentation });
    // The request: a span of the application's (its HTTP server span), the event written in its transaction.
    const { parent: request, result: id } = await within(telemetry.tracer, 'POST /checkout', () =>
      inTransaction(pool, (client) =>
        outbox.add(client, { topic: stream, key: 'acct-1', payload: { cents: 5 } }),
      ),
    );
    const { rows } = await pool.query<{ headers: Record<string, string> }>(
      `SELECT headers FROM ${outboxTable.table} WHERE id = $1`,
      [id],
    );
    expect(rows[0]?.headers.traceparent).toBe(`00-${request.traceId}-${request.spanId}-01`);

    const relay = new OutboxRelay({
      pool,
      schema: outboxTable.schema,
      listen: false,
      publisher: new RedisStreamsPublisher({ client: redis }),
      instrumentation,
    });
    // Whatever span is active around the relay, its publishes start traces of their own.
    await within(telemetry.tracer, 'relay loop', () => relay.runOnce());
    const publish = only(telemetry.spans(), `publish ${stream}`);
    expect(publish.kind).toBe(SpanKind.PRODUCER);
    expect(publish.parentSpanContext).toBeUndefined();
    expect(publish.spanContext().traceId).not.toBe(request.traceId);
    expect(publish.links.map((link) => link.context)).toEqual([
      expect.objectContaining({ traceId: request.traceId, spanId: request.spanId }),
    ]);
    expect(publish.attributes).toMatchObject({
      [SEMCONV.messagingSystem]: 'redis',
      [SEMCONV.messagingOperationType]: 'send',
      [SEMCONV.messagingDestination]: stream,
      [SEMCONV.messagingMessageId]: id,
      [ATTR.outboxAttempt]: 1,
    });

    const outcomes: InboxOutcome<unknown>[] = [];
    const consumer = await consumeIdempotently(
      async (entry: StreamEntry) =>
        telemetry.tracer.startActiveSpan('apply payment', (span) => {
          span.end();
          return entry.id;
        }),
      {
        client: redis.duplicate(),
        stream,
        group: 'ledger',
        scope: 'ledger',
        blockMs: 50,
        store: new RedisStore({ client: redis, prefix: `oncely-otel-${tag}` }),
        instrumentation,
        onOutcome: (outcome) => outcomes.push(outcome),
      },
    );
    try {
      await until(() => outcomes.length === 1);
      // The relay publishes the same message again (its confirmation was lost): the inbox drops the copy.
      await new RedisStreamsPublisher({ client: redis }).publish({
        id,
        topic: stream,
        key: 'acct-1',
        payload: Buffer.from('{"cents":5}'),
        contentType: 'application/json',
        headers: rows[0]!.headers,
        attempt: 2,
        createdAt: new Date(),
      });
      await until(() => outcomes.length === 2);
    } finally {
      await consumer.stop();
    }
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['processed', 'duplicate']);

    const spans = telemetry.spans();
    const processes = named(spans, `process ${stream}`);
    expect(processes).toHaveLength(2);
    for (const process of processes) {
      expect(process.kind).toBe(SpanKind.CONSUMER);
      expect(isChildOf(process, request)).toBe(true);
      expect(process.attributes).toMatchObject({
        [SEMCONV.messagingSystem]: 'redis',
        [SEMCONV.messagingDestination]: stream,
        [SEMCONV.messagingConsumerGroup]: 'ledger',
        [SEMCONV.messagingMessageId]: id,
      });
    }
    const processed = processes.find((span) => span.attributes[ATTR.inboxOutcome] === 'processed')!;
    const execution = named(spans, 'oncely inbox:ledger').find((span) => isChildOf(span, processed))!;
    expect(execution.attributes[ATTR.outcome]).toBe('acquired');
    expect(isChildOf(only(spans, 'apply payment'), execution)).toBe(true);
    const calls = named(spans, 'EVALSHA oncely_begin').filter((span) => isChildOf(span, execution));
    expect(calls).toHaveLength(1);
    const duplicate = processes.find((span) => span.attributes[ATTR.inboxOutcome] === 'duplicate')!;
    expect(
      named(spans, 'oncely inbox:ledger').find((span) => isChildOf(span, duplicate))?.attributes[
        ATTR.outcome
      ],
    ).toBe('replayed');

    const metrics = await telemetry.metrics();
    const sent = { [SEMCONV.messagingSystem]: 'redis', [SEMCONV.messagingDestination]: stream };
    expect(total(metrics.get(METRIC.outboxPublished.name), sent)).toBe(1);
    expect(recorded(metrics.get(METRIC.outboxLag.name), sent)).toBe(1);
    expect(recorded(metrics.get(METRIC.outboxPublishDuration.name), sent)).toBe(1);
    const inbox = metrics.get(METRIC.inboxMessages.name);
    expect(total(inbox, { ...sent, [ATTR.inboxOutcome]: 'processed', [ATTR.scope]: 'inbox:ledger' })).toBe(1);
    expect(total(inbox, { ...sent, [ATTR.inboxOutcome]: 'duplicate' })).toBe(1);
  });
});

describe('inbox outcomes', () => {
  it('failed, parked and invalid deliveries end their span in error and are counted by outcome', async () => {
    const inbox = new Inbox(
      async () => {
        throw new Error('handler bug');
      },
      {
        store: new MemoryStore(),
        scope: 'poison',
        maxAttempts: 1,
        messageId: (message: { id: string }) => message.id,
        instrumentation,
      },
    );
    const source = { system: 'nats', destination: 'orders.created' };
    expect((await inbox.handle({ id: 'm-1' }, { source })).kind).toBe('failed');
    expect((await inbox.handle({ id: 'm-1' }, { source })).kind).toBe('parked');
    expect((await inbox.handle({ id: '' }, { source })).kind).toBe('invalid');
    const spans = named(telemetry.spans(), 'process orders.created');
    expect(spans.map((span) => span.attributes[ATTR.inboxOutcome])).toEqual(['failed', 'parked', 'invalid']);
    for (const span of spans) expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(spans[0]?.attributes[SEMCONV.errorType]).toBe('Error');
    expect(spans[2]?.attributes[SEMCONV.messagingMessageId]).toBeUndefined();
    const metrics = await telemetry.metrics();
    for (const kind of ['failed', 'parked', 'invalid'])
      expect(
        total(metrics.get(METRIC.inboxMessages.name), {
          [ATTR.inboxOutcome]: kind,
          [ATTR.scope]: 'inbox:poison',
        }),
        kind,
      ).toBe(1);
  });

  it('continues the trace in the headers even inside another active span, with no propagator registered', async () => {
    const inbox = new Inbox(async () => 'ok', {
      store: new MemoryStore(),
      scope: 'nested',
      messageId: (message: { id: string }) => message.id,
      instrumentation,
    });
    const writer = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };
    await within(telemetry.tracer, 'consumer loop', () =>
      inbox.handle(
        { id: 'm-2' },
        {
          headers: { traceparent: `00-${writer.traceId}-${writer.spanId}-01` },
          source: { system: 'nats', destination: 'nested' },
        },
      ),
    );
    const process = only(telemetry.spans(), 'process nested');
    expect(process.spanContext().traceId).toBe(writer.traceId);
    expect(process.parentSpanContext?.spanId).toBe(writer.spanId);
  });
});

describe('relay failures and the outbox gauges', () => {
  it('counts failed publishes and dead letters; the gauges report backlog, oldest age and dead letters', async () => {
    const { schema } = await freshOutbox(pool, 'otelgauge');
    const outbox = new Outbox({ schema, instrumentation });
    // A message the broker refuses, beside one it takes: the broker is up, so the refusal is the message's fault.
    await inTransaction(pool, async (client) => {
      await outbox.add(client, { topic: 'refused', payload: { n: 1 } });
      await outbox.add(client, { topic: 'taken', payload: { n: 0 } });
    });
    const refusing: Publisher = {
      name: 'nats',
      delivery: 'at-least-once',
      publish: async (message) => {
        if (message.topic === 'refused') throw Object.assign(new Error('no responders'), { code: '503' });
      },
    };
    const relay = new OutboxRelay({
      pool,
      schema,
      listen: false,
      publisher: refusing,
      maxAttempts: 1,
      instrumentation,
    });
    await relay.runOnce();
    const publish = only(telemetry.spans(), 'publish refused');
    expect(publish.status.code).toBe(SpanStatusCode.ERROR);
    expect(publish.attributes[SEMCONV.errorType]).toBe('503');

    // Two events waiting, written a moment ago.
    await inTransaction(pool, async (client) => {
      await outbox.addMany(client, [
        { topic: 'waiting', payload: { n: 2 } },
        { topic: 'waiting', payload: { n: 3 } },
      ]);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const gauges = instrumentation.observeOutbox(pool, { schema });
    try {
      const metrics = await telemetry.metrics();
      const refused = { [SEMCONV.messagingSystem]: 'nats', [SEMCONV.messagingDestination]: 'refused' };
      expect(total(metrics.get(METRIC.outboxFailed.name), refused)).toBe(1);
      expect(total(metrics.get(METRIC.outboxDeadLettered.name), refused)).toBe(1);
      const table = { [ATTR.outboxTable]: `${schema}.oncely_outbox` };
      expect(points(metrics.get(METRIC.outboxPending.name), table).map((p) => p.value)).toEqual([2]);
      expect(points(metrics.get(METRIC.outboxDeadLetters.name), table).map((p) => p.value)).toEqual([1]);
      const [age] = points(metrics.get(METRIC.outboxOldestPendingAge.name), table).map(
        (p) => p.value as number,
      );
      expect(age).toBeGreaterThan(0.04);
      expect(age).toBeLessThan(60);
      expect(metrics.get(METRIC.outboxOldestPendingAge.name)?.descriptor.unit).toBe('s');
    } finally {
      gauges.stop();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  it('refuses traceContext and instrumentation together, and instrumentations that are not one', () => {
    expect(() => new Outbox({ instrumentation, traceContext: () => ({}) })).toThrow(/not both/);
    expect(() => new Outbox({ instrumentation: 5 as never })).toThrow(InvalidOptionsError);
    const publisher = new RedisStreamsPublisher({ client: redis });
    expect(() => new OutboxRelay({ pool, publisher, instrumentation: { relay: 'on' } as never })).toThrow(
      InvalidOptionsError,
    );
    expect(
      () =>
        new Inbox(async () => 1, {
          store: new MemoryStore(),
          messageId: () => 'm',
          instrumentation: { inbox: true } as never,
        }),
    ).toThrow(InvalidOptionsError);
  });
});
