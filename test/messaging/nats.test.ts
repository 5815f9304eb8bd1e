import { type JsMsg, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import { consumeIdempotently, NatsPublisher } from '../../src/messaging/brokers/nats.js';
import type { InboxOutcome } from '../../src/messaging/consumer.js';
import { Outbox, OutboxRelay, type RelayEvent } from '../../src/messaging/outbox/index.js';
import type { OutboxMessage } from '../../src/messaging/publisher.js';
import { requireService } from '../support/services.js';
import { freshStream, natsConnect } from './support/nats.js';
import { freshOutbox, testPool, until } from './support/pg.js';
import { acksOnlyWhatIsStored, outageInboxOptions } from './support/store-outage.js';

let nc: NatsConnection;
let stream: Awaited<ReturnType<typeof freshStream>>;

beforeAll(async () => {
  await requireService('nats');
  nc = await natsConnect();
  stream = await freshStream(nc, 'natspub');
});

afterAll(async () => {
  await stream?.drop();
  await nc?.close();
});

const message = (id: string, extra: Partial<OutboxMessage> = {}): OutboxMessage => ({
  id,
  topic: `${stream.subject}.payment`,
  key: 'p-1',
  payload: Buffer.from(JSON.stringify({ id })),
  contentType: 'application/json',
  headers: { traceparent: '00-abc-def-01' },
  attempt: 1,
  createdAt: new Date(),
  ...extra,
});

describe('NatsPublisher', () => {
  it('publishes with Nats-Msg-Id = outbox id, so a retried publish is stored once', async () => {
    const publisher = new NatsPublisher({ jetstream: jetstream(nc) });
    const before = await stream.count();
    await publisher.publish(message('id-1'));
    await publisher.publish(message('id-1'));
    await publisher.publish(message('id-2', { key: null }));
    expect((await stream.count()) - before).toBe(2);
    const stored = await stream.jsm.streams.getMessage(stream.name, { seq: before + 1 });
    expect(stored?.header.get('Nats-Msg-Id')).toBe('id-1');
    expect(stored?.header.get('Content-Type')).toBe('application/json');
    expect(stored?.header.get('Oncely-Key')).toBe('p-1');
    expect(stored?.header.get('traceparent')).toBe('00-abc-def-01');
    expect(stored?.json()).toEqual({ id: 'id-1' });
  });

  it('rejects when no stream takes the subject (the relay retries it, then dead-letters it)', async () => {
    const publisher = new NatsPublisher({ jetstream: jetstream(nc), timeoutMs: 1_000 });
    await expect(publisher.publish(message('x', { topic: 'oncely.nowhere.at.all' }))).rejects.toThrow();
  });

  it('warns when the stream duplicate window is shorter than the relay retry horizon', async () => {
    await requireService('postgres');
    const short = await freshStream(nc, 'natswindow', 1_000);
    const pool: pg.Pool = testPool(3);
    const box = await freshOutbox(pool, 'natswin');
    const events: RelayEvent[] = [];
    const relay = new OutboxRelay({
      pool,
      schema: box.schema,
      listen: false,
      minPollMs: 5,
      publisher: new NatsPublisher({ jetstream: jetstream(nc) }),
      onEvent: (event) => events.push(event),
    });
    try {
      await relay.start();
      await new Outbox({ schema: box.schema }).add(pool, { topic: `${short.subject}.x`, payload: { n: 1 } });
      await until(() => events.some((e) => e.type === 'warning'));
      const warning = events.find((e) => e.type === 'warning');
      expect(warning).toMatchObject({ type: 'warning' });
      expect(warning?.type === 'warning' && warning.message).toContain(`${relay.retryHorizonMs} ms`);
      expect(await short.count()).toBe(1);
    } finally {
      await relay.stop();
      await short.drop();
      await box.drop();
      await pool.end();
    }
  });
});

describe('consumeIdempotently (JetStream)', () => {
  it('acks processed messages, naks and retries failures, terminates parked ones', async () => {
    const js = jetstream(nc);
    const local = await freshStream(nc, 'natsconsume');
    const publisher = new NatsPublisher({ jetstream: js });
    const applied: string[] = [];
    const failuresLeft = new Map([['flaky', 2]]);
    const outcomes: InboxOutcome<unknown>[] = [];
    const consumer = await consumeIdempotently(
      async (msg: JsMsg) => {
        const { id } = msg.json<{ id: string }>();
        if (id === 'poison') throw new Error('cannot parse');
        const left = failuresLeft.get(id) ?? 0;
        if (left > 0) {
          failuresLeft.set(id, left - 1);
          throw new Error('transient');
        }
        applied.push(id);
      },
      {
        consumer: await js.consumers.get(local.name, 'test'),
        store: new MemoryStore(),
        maxAttempts: 3,
        maxRetryDelayMs: 50,
        onOutcome: (outcome) => outcomes.push(outcome),
      },
    );
    try {
      for (let i = 0; i < 20; i++)
        await publisher.publish(
          message(`ok-${i}`, {
            topic: `${local.subject}.e`,
            payload: Buffer.from(JSON.stringify({ id: `ok-${i}` })),
          }),
        );
      await publisher.publish(
        message('flaky', { topic: `${local.subject}.e`, payload: Buffer.from('{"id":"flaky"}') }),
      );
      await publisher.publish(
        message('poison', { topic: `${local.subject}.e`, payload: Buffer.from('{"id":"poison"}') }),
      );
      await until(() => applied.length === 21 && outcomes.some((o) => o.kind === 'parked'));
    } finally {
      await consumer.stop();
    }
    expect(applied.sort()).toEqual([...Array.from({ length: 20 }, (_, i) => `ok-${i}`), 'flaky'].sort());
    expect(outcomes.filter((o) => o.kind === 'parked')).toEqual([
      { kind: 'parked', attempts: 3, first: true },
    ]);
    // Acks travel asynchronously: wait for the server to have them all.
    await until(async () => {
      const info = await local.jsm.consumers.info(local.name, 'test');
      return info.num_ack_pending === 0 && info.num_pending === 0;
    });
    await local.drop();
  });
});

describe('consumeIdempotently (JetStream): acknowledgements and errors', () => {
  const pending = async (local: Awaited<ReturnType<typeof freshStream>>) => {
    const info = await local.jsm.consumers.info(local.name, 'test');
    return info.num_ack_pending + info.num_pending;
  };

  it("acks only what the store recorded: while complete fails or hangs the message is nak'ed, then processed once", async () => {
    const js = jetstream(nc);
    const local = await freshStream(nc, 'natsoutage');
    try {
      await acksOnlyWhatIsStored({
        start: async (store, handler, onOutcome) =>
          consumeIdempotently(async () => handler(), {
            consumer: await js.consumers.get(local.name, 'test'),
            store,
            maxRetryDelayMs: 100,
            onOutcome,
            ...outageInboxOptions,
          }),
        send: async () => {
          await new NatsPublisher({ jetstream: js }).publish(
            message('outage-1', { topic: `${local.subject}.e` }),
          );
        },
        drained: async () => (await pending(local)) === 0,
      });
    } finally {
      await local.drop();
    }
  });

  it('a throwing onOutcome is reported through onError and the consumer goes on', async () => {
    const js = jetstream(nc);
    const local = await freshStream(nc, 'natserrors');
    const reported: { error: unknown; operation: string }[] = [];
    const handled: string[] = [];
    let hookCalls = 0;
    const consumer = await consumeIdempotently(
      async (msg: JsMsg) => {
        handled.push(msg.json<{ id: string }>().id);
      },
      {
        consumer: await js.consumers.get(local.name, 'test'),
        store: new MemoryStore(),
        onOutcome: () => {
          if (++hookCalls === 1) throw new Error('metrics backend down');
        },
        onError: (error, operation) => reported.push({ error, operation }),
      },
    );
    const publisher = new NatsPublisher({ jetstream: js });
    try {
      await publisher.publish(message('hook-1', { topic: `${local.subject}.e` }));
      await until(() => reported.length === 1);
      expect(reported[0]).toMatchObject({ operation: 'onOutcome' });
      expect(String(reported[0]!.error)).toContain('metrics backend down');
      await publisher.publish(message('hook-2', { topic: `${local.subject}.e` }));
      await until(() => handled.includes('hook-2') && hookCalls === 2);
      await until(async () => (await pending(local)) === 0);
      // Acked once, not nak'ed after the ack: neither message came back.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(handled).toEqual(['hook-1', 'hook-2']);
    } finally {
      await consumer.stop();
      await local.drop();
    }
  });
});
