import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { Controller, Inject, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientProxyFactory,
  EventPattern,
  MessagePattern,
  type MicroserviceOptions,
  NatsRecordBuilder,
  Payload,
  Transport,
} from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/core/store.js';
import { IdempotencyClaim, Idempotent, type MessageClaim, OncelyModule } from '../../src/nestjs/index.js';
import { until } from '../http/support/fixture.js';
import { requireService, services } from '../support/services.js';
import { redisStore } from '../support/stores.js';

// @Idempotent() on Nest microservice handlers, on two transports that run here: NATS (the key in the message's
// Idempotency-Key header) and Redis (the key from the payload, by the route's `key` function). Two service instances
// share one RedisStore; the client is Nest's own ClientProxy.
vi.setConfig({ testTimeout: 60_000 });

const tag = randomUUID().slice(0, 8);
const runs = new Map<string, number>();
const bump = (what: string) => {
  const n = (runs.get(what) ?? 0) + 1;
  runs.set(what, n);
  return n;
};
const RUNS = Symbol('runs');

interface Charge {
  readonly orderId: string;
  readonly amount: number;
}

@Controller()
class PaymentsHandlers {
  constructor(@Inject(RUNS) private readonly count: typeof bump) {}

  // Request-response: a retry gets the first answer; a duplicate in flight waits for it.
  @MessagePattern(`payments.charge.${tag}`)
  @Idempotent({ waitMs: 10_000 })
  async charge(@Payload() charge: Charge, @IdempotencyClaim() claim?: MessageClaim) {
    const n = this.count(`charge ${charge.orderId}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
    return { id: randomUUID(), amount: charge.amount, n, token: claim?.token };
  }

  // Redis carries no headers: the key is the payload's orderId. Redis hands every message to every instance: the
  // second waits for the first's answer instead of answering 409.
  @MessagePattern(`payments.refund.${tag}`)
  @Idempotent({
    key: (_context, body) => (body as { orderId?: string } | undefined)?.orderId,
    waitMs: 10_000,
  })
  async refund(@Payload() charge: Charge) {
    return { id: randomUUID(), n: this.count(`refund ${charge.orderId}`) };
  }

  // Fire-and-forget: a redelivered event does not run again.
  @EventPattern<string>(`orders.placed.${tag}`)
  @Idempotent({ key: (_context, body) => (body as { orderId?: string } | undefined)?.orderId })
  async placed(@Payload() order: { orderId: string }) {
    this.count(`placed ${order.orderId}`);
  }
}

async function startService(transport: MicroserviceOptions, store: Store) {
  @Module({
    imports: [OncelyModule.forRoot({ store, logger: false })],
    controllers: [PaymentsHandlers],
    providers: [{ provide: RUNS, useValue: bump }],
  })
  class ServiceModule {}
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(ServiceModule, {
    ...transport,
    logger: false,
  });
  await app.listen();
  return app;
}

const nats: MicroserviceOptions = {
  transport: Transport.NATS,
  options: { servers: [services.nats.url], queue: `oncely-${tag}` },
};
const redis: MicroserviceOptions = {
  transport: Transport.REDIS,
  options: { host: services.redis.host, port: services.redis.port },
};
const stores = redisStore('nestjs-rpc');
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  await requireService('nats');
  await requireService('redis');
});
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
});

/** Two instances of the service on one store, and a client, on `transport`. */
async function serviceOn(transport: MicroserviceOptions) {
  const store = await stores.create();
  for (let i = 0; i < 2; i++) {
    const app = await startService(transport, store);
    closers.push(() => app.close());
  }
  const client = ClientProxyFactory.create(transport as never);
  await client.connect();
  closers.push(async () => client.close());
  return client;
}

const keyed = (data: unknown, key: string) => {
  const headers = natsHeaders();
  headers.set('Idempotency-Key', key);
  return new NatsRecordBuilder(data).setHeaders(headers).build();
};

describe('@Idempotent() on a NATS @MessagePattern (key in the Idempotency-Key header)', () => {
  it('a retry gets the first answer; 40 concurrent sends of 10 keys run each key once, one answer per key', async () => {
    const client = await serviceOn(nats);
    const pattern = `payments.charge.${tag}`;
    const first = await lastValueFrom(client.send(pattern, keyed({ orderId: 'o-1', amount: 5 }, 'k-1')));
    const again = await lastValueFrom(client.send(pattern, keyed({ orderId: 'o-1', amount: 5 }, 'k-1')));
    expect(again).toEqual(first);
    expect(first).toMatchObject({ amount: 5, n: 1, token: expect.any(Number) });
    expect(runs.get('charge o-1')).toBe(1);

    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        lastValueFrom(
          client.send(pattern, keyed({ orderId: `storm-${i % 10}`, amount: i % 10 }, `storm-key-${i % 10}`)),
        ),
      ),
    );
    for (let k = 0; k < 10; k++) {
      expect(runs.get(`charge storm-${k}`)).toBe(1);
      const ofKey = answers.filter((_, i) => i % 10 === k);
      expect(new Set(ofKey.map((answer) => JSON.stringify(answer))).size).toBe(1);
    }
  });

  it('refuses as the HTTP layer does, with its problem in the RpcException: 422 reused key, 400 missing or malformed key', async () => {
    const client = await serviceOn(nats);
    const pattern = `payments.charge.${tag}`;
    await lastValueFrom(client.send(pattern, keyed({ orderId: 'o-2', amount: 1 }, 'k-2')));
    await expect(
      lastValueFrom(client.send(pattern, keyed({ orderId: 'o-2', amount: 2 }, 'k-2'))),
    ).rejects.toMatchObject({ status: 422, type: expect.stringMatching(/#key-reused$/) });
    await expect(lastValueFrom(client.send(pattern, { orderId: 'o-3', amount: 1 }))).rejects.toMatchObject({
      status: 400,
      type: expect.stringMatching(/#key-missing$/),
    });
    await expect(
      lastValueFrom(client.send(pattern, keyed({ orderId: 'o-4', amount: 1 }, 'x'.repeat(256)))),
    ).rejects.toMatchObject({ status: 400, type: expect.stringMatching(/#key-malformed$/) });
    expect(runs.get('charge o-2')).toBe(1);
    expect(runs.has('charge o-3')).toBe(false);
    expect(runs.has('charge o-4')).toBe(false);
  });
});

describe('@Idempotent() on the Redis transport (key from the payload)', () => {
  it('a @MessagePattern retried replays; an @EventPattern emitted three times runs once', async () => {
    const client = await serviceOn(redis);
    const order = { orderId: `r-${tag}`, amount: 3 };
    const first = await lastValueFrom(client.send(`payments.refund.${tag}`, order));
    const again = await lastValueFrom(client.send(`payments.refund.${tag}`, order));
    expect(again).toEqual(first);
    expect(runs.get(`refund r-${tag}`)).toBe(1);

    for (let i = 0; i < 3; i++)
      await lastValueFrom(client.emit(`orders.placed.${tag}`, { orderId: `e-${tag}` }));
    await lastValueFrom(client.emit(`orders.placed.${tag}`, { orderId: `e2-${tag}` }));
    await until(() => runs.get(`placed e2-${tag}`) === 1);
    // The three copies reached both instances' subscriptions: still one run.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs.get(`placed e-${tag}`)).toBe(1);
  });
});
