import type { Pool } from 'pg';
import { migrate } from '../../messaging/outbox/migrate.js';
import { OutboxRelay } from '../../messaging/outbox/relay.js';
import type { OutboxMessage, Publisher } from '../../messaging/publisher.js';

/**
 * The demo's outbox relay: it publishes the `payment.created` events the payments service wrote in its
 * transactions. With no broker to assume on a fresh machine, the demo's publisher hands them to `deliver` (the
 * demo counts them or prints them); a real service passes `NatsPublisher`, `RabbitMqPublisher` or
 * `RedisStreamsPublisher` instead.
 */
export async function startDemoRelay(
  pool: Pool,
  deliver: (message: OutboxMessage) => void,
): Promise<OutboxRelay> {
  await migrate(pool);
  const publisher: Publisher = {
    name: 'demo',
    delivery: 'at-least-once',
    async publish(message) {
      deliver(message);
    },
  };
  const relay = new OutboxRelay({ pool, publisher, minPollMs: 20 });
  await relay.start();
  return relay;
}
