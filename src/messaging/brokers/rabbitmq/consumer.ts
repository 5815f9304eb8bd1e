/**
 * @module `consumeIdempotently` for RabbitMQ: a queue's messages through an `Inbox`, settled with `ack`, a delayed
 * requeue, or a `nack` to the queue's dead-letter exchange; messages waiting for their requeue go back to the queue
 * on `stop()`.
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import { InvalidOptionsError } from '../../../core/errors.js';
import { wholeNumber } from '../../../core/validate.js';
import type { InboxHandler } from '../../consumer.js';
import { traceHeadersOf } from '../../instrumentation.js';
import type { ConsumerErrorHandler } from '../consumer-errors.js';
import {
  consumerOptions,
  consumerParts,
  type InboxConsumer,
  MessageSettler,
  type SharedConsumeOptions,
} from '../settle.js';

export interface RabbitMqConsumeOptions extends SharedConsumeOptions<ConsumeMessage> {
  /** A channel of the caller's connection. */
  readonly channel: Channel;
  readonly queue: string;
  /** Default: the `message-id` property (the outbox id). */
  readonly messageId?: (message: ConsumeMessage) => string;
  /** Unacknowledged messages the broker hands this consumer at once (`basic.qos`). Default 32. */
  readonly prefetch?: number;
  /** Longest wait before a message not acknowledged is requeued. Default 30,000 ms. */
  readonly maxRetryDelayMs?: number;
  /**
   * Receives every error the consumer recovers from, with the step that failed: `settle` (acknowledging failed;
   * the message is requeued), `requeue` (the channel is gone: the broker requeues every unacknowledged message by
   * itself) or `onOutcome` (the hook threw). Without it, the first failure of a run of failures is a process
   * warning.
   */
  readonly onError?: ConsumerErrorHandler;
}

export const defaultRabbitMqMessageId = (message: ConsumeMessage): string =>
  message.properties.messageId ?? '';

/** `stop()` cancels the subscription and resolves once the messages in hand are settled. */
export interface RabbitMqInboxConsumer<R> extends InboxConsumer<ConsumeMessage, R> {
  readonly consumerTag: string;
}

/**
 * Consumes a queue through an `Inbox`: `ack` once the outcome is stored (processed or a duplicate), `nack` with
 * requeue after a delay when another consumer holds the message or the handler failed, and `nack` without
 * requeue (the queue's dead-letter exchange, when it has one) when it is parked or has no `message-id`.
 *
 * @example
 * await consumeIdempotently(async (msg) => applyPayment(JSON.parse(msg.content.toString())), {
 *   channel, queue: 'payments', store: new RedisStore({ client: redis }), scope: 'ledger',
 * });
 */
export async function consumeIdempotently<R>(
  handler: InboxHandler<ConsumeMessage, R>,
  options: RabbitMqConsumeOptions,
): Promise<RabbitMqInboxConsumer<R>> {
  const { channel, queue, prefetch, maxRetryDelayMs: maxRetryOption, ...shared } = consumerOptions(options);
  if (channel === null || typeof channel?.consume !== 'function')
    throw new InvalidOptionsError('channel must be an amqplib Channel');
  if (typeof queue !== 'string' || queue === '')
    throw new InvalidOptionsError('queue must be a non-empty string');
  const maxRetryDelayMs = wholeNumber('maxRetryDelayMs', maxRetryOption, 30_000, { min: 1 });
  const { inbox, onOutcome, errors } = consumerParts(
    handler,
    shared,
    defaultRabbitMqMessageId,
    `oncely/rabbitmq consumer of ${queue}`,
  );
  await channel.prefetch(wholeNumber('prefetch', prefetch, 32, { min: 1, max: 65_535 }));

  const waiting = new Map<NodeJS.Timeout, ConsumeMessage>();
  let stopping = false;
  const requeue = (message: ConsumeMessage) => {
    try {
      channel.nack(message, false, true);
    } catch (error) {
      // The channel is gone: the broker requeues every unacknowledged message by itself.
      errors.failed(error, 'requeue');
    }
  };
  const requeueLater = (message: ConsumeMessage, delayMs: number) => {
    const timer = setTimeout(() => {
      waiting.delete(timer);
      requeue(message);
    }, delayMs);
    waiting.set(timer, message);
  };
  const settler = new MessageSettler<ConsumeMessage>({
    handle: (message) =>
      inbox.handle(message, {
        redelivered: message.fields.redelivered,
        headers: traceHeadersOf((name) => headerText(message.properties.headers?.[name])),
        source: { system: 'rabbitmq', destination: queue },
      }),
    broker: {
      ack: (message) => channel.ack(message),
      // To the queue's dead-letter exchange, when it has one.
      deadLetter: (message) => channel.nack(message, false, false),
      retry: (message, delayMs) => {
        if (stopping) channel.nack(message, false, true);
        else requeueLater(message, delayMs);
      },
    },
    maxRetryDelayMs,
    onOutcome,
    errors,
    settleFailed: (error, message) => {
      errors.failed(error, 'settle');
      requeue(message);
    },
  });

  const { consumerTag } = await channel.consume(queue, (message) => {
    if (message === null) return; // cancelled by the broker (queue deleted)
    settler.take(message);
  });

  return {
    inbox,
    consumerTag,
    async stop() {
      stopping = true;
      await channel.cancel(consumerTag);
      await settler.all();
      // Messages waiting for their retry go back to the queue now rather than whenever the channel closes.
      for (const [timer, message] of waiting) {
        clearTimeout(timer);
        requeue(message);
      }
      waiting.clear();
    },
  };
}

/** AMQP header values arrive as strings, or as Buffers for long strings. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
}
