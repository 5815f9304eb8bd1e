/**
 * @module The demo's outbox relay, delivering its payment events to the demo itself instead of a broker.
 */
import type { Pool } from 'pg';
import { migrate } from '../../messaging/outbox/migrate.js';
import { OutboxRelay } from '../../messaging/outbox/relay.js';
import type { OutboxMessage, Publisher } from '../../messaging/publisher.js';
import { DEMO_SCHEMA, DEMO_TOPIC } from './location.js';

/**
 * The demo's outbox relay: it publishes the `payment.created` events the payments service wrote in its
 * transactions. With no broker to assume on a fresh machine, the demo's publisher hands them to `deliver` (the
 * demo counts them or prints them); a real service passes `NatsPublisher`, `RabbitMqPublisher` or
 * `RedisStreamsPublisher` instead. It reads the demo's own outbox (`oncely_demo`), and only the demo's topic even
 * there: an application's events are never its to publish.
 */
export async function startDemoRelay(
  pool: Pool,
  deliver: (message: OutboxMessage) => void,
  options: { refuse?: (message: OutboxMessage) => string | undefined; maxAttempts?: number } = {},
): Promise<OutboxRelay> {
  await migrate(pool, { schema: DEMO_SCHEMA });
  const publisher: Publisher = {
    name: 'demo',
    delivery: 'at-least-once',
    async publish(message) {
      // The dashboard demo's broker refuses some messages, so retries and dead letters have something to show.
      const refused = options.refuse?.(message);
      if (refused !== undefined) throw new Error(refused);
      deliver(message);
    },
  };
  const relay = new OutboxRelay({
    pool,
    schema: DEMO_SCHEMA,
    topics: [DEMO_TOPIC],
    publisher,
    minPollMs: 20,
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  });
  await relay.start();
  return relay;
}
