/**
 * @module What every broker entry (`oncely/nats`, `oncely/rabbitmq`, `oncely/redis-streams`) offers besides its own
 * publisher and consumer: the inbox its consumer runs messages through, and the publisher contract its publisher
 * implements, so a broker's users import from that broker's entry alone.
 */
export {
  actionFor,
  Inbox,
  type InboxContext,
  type InboxHandler,
  type InboxOptions,
  type InboxOutcome,
} from '../consumer.js';
export type { OutboxMessage, Publisher, PublisherContext } from '../publisher.js';
