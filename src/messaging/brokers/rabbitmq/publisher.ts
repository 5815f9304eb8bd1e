/**
 * @module `RabbitMqPublisher`: the outbox relay's publisher for RabbitMQ, through a confirm channel with `mandatory`
 * set, so a publish counts only once the broker confirmed and routed it; a channel given as a function is made
 * again after it closes.
 */
import type { ConfirmChannel, Message } from 'amqplib';
import { InvalidOptionsError } from '../../../core/errors.js';
import { knownOptions, optionalFunction } from '../../../core/validate.js';
import type { OutboxMessage, Publisher } from '../../publisher.js';

export interface RabbitMqPublisherOptions {
  /**
   * A confirm channel of the caller's connection (`await connection.createConfirmChannel()`), or a function that
   * returns one: it is called again after the channel closed (connection lost), so the relay recovers with it.
   */
  readonly channel: ConfirmChannel | (() => Promise<ConfirmChannel>);
  /** The exchange of a message. Default `''` (the default exchange: the routing key names the queue). */
  readonly exchange?: (message: OutboxMessage) => string;
  /** The routing key of a message. Default: its topic. */
  readonly routingKey?: (message: OutboxMessage) => string;
}

/** RabbitMQ accepted the message but no queue was bound to take it: with `mandatory`, that is a failure. */
export class UnroutableMessageError extends Error {
  override name = 'UnroutableMessageError' as const;
  constructor(exchange: string, routingKey: string) {
    super(`no queue is bound for exchange "${exchange}" and routing key "${routingKey}"`);
  }
}

/**
 * Publishes through a confirm channel: persistent, `message-id` = outbox id, `mandatory`, so `publish` resolves
 * only when the broker confirmed the message AND routed it to a queue (an unroutable message would otherwise be
 * confirmed and dropped). RabbitMQ does not deduplicate: consumers remove duplicates with an inbox.
 *
 * @example
 * const publisher = new RabbitMqPublisher({ channel: () => connection.createConfirmChannel() });
 */
export class RabbitMqPublisher implements Publisher {
  readonly name = 'rabbitmq';
  readonly delivery = 'at-least-once' as const;
  readonly #source: ConfirmChannel | (() => Promise<ConfirmChannel>);
  readonly #exchange: (message: OutboxMessage) => string;
  readonly #routingKey: (message: OutboxMessage) => string;
  readonly #returned = new Set<string>();
  #channel: Promise<ConfirmChannel> | undefined;

  constructor(options: RabbitMqPublisherOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('RabbitMqPublisher: options are required');
    }
    knownOptions('RabbitMqPublisher', options, ['channel', 'exchange', 'routingKey']);
    const { channel } = options;
    if (typeof channel !== 'function' && (channel === null || typeof channel?.publish !== 'function')) {
      throw new InvalidOptionsError('channel must be a ConfirmChannel or a function returning one');
    }
    optionalFunction('exchange', options.exchange);
    optionalFunction('routingKey', options.routingKey);
    this.#source = channel;
    this.#exchange = options.exchange ?? (() => '');
    this.#routingKey = options.routingKey ?? ((message) => message.topic);
  }

  async publish(message: OutboxMessage): Promise<void> {
    const channel = await this.#currentChannel();
    const exchange = this.#exchange(message);
    const routingKey = this.#routingKey(message);
    await new Promise<void>((resolve, reject) => {
      const confirmed = (error: unknown) => {
        // The broker sends basic.return before the confirm of the same message.
        const returned = this.#returned.delete(message.id);
        if (error) reject(error instanceof Error ? error : new Error(String(error)));
        else if (returned) reject(new UnroutableMessageError(exchange, routingKey));
        else resolve();
      };
      try {
        channel.publish(
          exchange,
          routingKey,
          Buffer.from(message.payload.buffer, message.payload.byteOffset, message.payload.byteLength),
          {
            persistent: true,
            mandatory: true,
            messageId: message.id,
            contentType: message.contentType,
            timestamp: Math.floor(message.createdAt.getTime() / 1000),
            type: message.topic,
            headers:
              message.key === null ? message.headers : { ...message.headers, 'oncely-key': message.key },
          },
          confirmed,
        );
      } catch (error) {
        reject(error);
      }
    });
  }

  #currentChannel(): Promise<ConfirmChannel> {
    if (this.#channel !== undefined) return this.#channel;
    const source = this.#source;
    const opening = typeof source === 'function' ? source() : Promise.resolve(source);
    this.#channel = opening.then(
      (channel) => {
        channel.on('return', (returned: Message) => {
          const id = returned.properties.messageId;
          if (typeof id === 'string') this.#returned.add(id);
        });
        // A closed channel is replaced on the next publish when the caller gave a factory.
        channel.once('close', () => {
          if (typeof source === 'function') this.#channel = undefined;
        });
        // Without a listener a channel error would crash the process. The failure reaches the relay anyway: the
        // publishes it breaks get an error in their confirm, and 'close' (above) brings a fresh channel.
        channel.on('error', () => {});
        return channel;
      },
      (error: unknown) => {
        this.#channel = undefined;
        throw error;
      },
    );
    return this.#channel;
  }
}
