/**
 * @module `consumeIdempotently` for NATS JetStream: a pull consumer's messages through an `Inbox`, settled with
 * `ack`, `nak` with a delay, or `term`, and kept alive with `working()` while a handler runs past the ack wait.
 */
import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { InvalidOptionsError } from '../../../core/errors.js';
import { wholeNumber } from '../../../core/validate.js';
import type { InboxHandler, InboxOutcome } from '../../consumer.js';
import { traceHeadersOf } from '../../instrumentation.js';
import type { ConsumerErrorHandler } from '../consumer-errors.js';
import {
  consumerOptions,
  consumerParts,
  type InboxConsumer,
  MessageSettler,
  type SharedConsumeOptions,
} from '../settle.js';

export interface NatsConsumeOptions extends SharedConsumeOptions<JsMsg> {
  /** A pull consumer of the caller's: `await jetstream(nc).consumers.get(stream, durableName)`. */
  readonly consumer: Consumer;
  /** Default: the `Nats-Msg-Id` header (the outbox id), else `<stream>:<stream sequence>`. */
  readonly messageId?: (message: JsMsg) => string;
  /** Messages handled at once. Default 16. */
  readonly concurrency?: number;
  /** Longest delay asked for with `nak` before a redelivery. Default 30,000 ms. */
  readonly maxRetryDelayMs?: number;
  /** While a handler runs, tell the server every this often that it is still working (`+WPI`). Default 10,000 ms. */
  readonly workingIntervalMs?: number;
  /**
   * Receives every error the consumer recovers from, with the step that failed: `settle` (acknowledging failed;
   * the message is nak'ed), `nak`, `onOutcome` (the hook threw), or `consume` (the pull subscription ended with
   * an error: nothing more is consumed; start a new consumer). Without it, the first failure of a run of failures
   * is a process warning.
   */
  readonly onError?: ConsumerErrorHandler;
}

export const defaultNatsMessageId = (message: JsMsg): string =>
  message.headers?.get('Nats-Msg-Id') || `${message.info.stream}:${message.seq}`;

/** A running idempotent JetStream consumer. */
/** `stop()` stops pulling and resolves once the messages in hand are settled (acked, nak'ed or terminated). */
export type NatsInboxConsumer<R> = InboxConsumer<JsMsg, R>;

/**
 * Consumes a JetStream pull consumer through an `Inbox`: `ack` once the outcome is stored (processed or a
 * duplicate), `nak` with a delay when another consumer holds the message or the handler failed, `term` when it
 * is parked (it kept crashing) or has no usable id.
 *
 * @example
 * const consumer = await consumeIdempotently(async (msg) => applyPayment(msg.json()), {
 *   consumer: await jetstream(nc).consumers.get('PAYMENTS', 'ledger'),
 *   store: new RedisStore({ client: redis }),
 *   scope: 'ledger',
 * });
 */
export async function consumeIdempotently<R>(
  handler: InboxHandler<JsMsg, R>,
  options: NatsConsumeOptions,
): Promise<NatsInboxConsumer<R>> {
  const {
    consumer,
    concurrency: concurrencyOption,
    maxRetryDelayMs: maxRetryOption,
    workingIntervalMs: workingOption,
    ...shared
  } = consumerOptions(options);
  if (consumer === null || typeof consumer?.consume !== 'function') {
    throw new InvalidOptionsError(
      'consumer must be a JetStream pull consumer (js.consumers.get(stream, name))',
    );
  }
  const concurrency = wholeNumber('concurrency', concurrencyOption, 16, { min: 1 });
  const maxRetryDelayMs = wholeNumber('maxRetryDelayMs', maxRetryOption, 30_000, { min: 1 });
  const workingIntervalMs = wholeNumber('workingIntervalMs', workingOption, 10_000, { min: 1 });
  const { inbox, onOutcome, errors } = consumerParts(
    handler,
    shared,
    defaultNatsMessageId,
    'oncely/nats consumer',
  );

  const handle = async (message: JsMsg): Promise<InboxOutcome<R>> => {
    const working = setInterval(() => message.working(), workingIntervalMs);
    try {
      return await inbox.handle(message, {
        redelivered: message.redelivered,
        headers: traceHeadersOf((name) => message.headers?.get(name)),
        source: { system: 'nats', destination: message.subject, group: message.info.consumer },
      });
    } finally {
      clearInterval(working);
    }
  };
  const settler = new MessageSettler<JsMsg>({
    handle,
    broker: {
      ack: (message) => message.ack(),
      retry: (message, delayMs) => message.nak(delayMs),
      // No reason text: servers before 2.10 ignore a `+TERM` that carries one, leaving the message pending.
      deadLetter: (message) => message.term(),
    },
    maxRetryDelayMs,
    onOutcome,
    errors,
    settleFailed: (error, message) => {
      errors.failed(error, 'settle');
      try {
        message.nak(maxRetryDelayMs);
      } catch (nakError) {
        // The connection is gone: the server redelivers the message after its ack wait.
        errors.failed(nakError, 'nak');
      }
    },
  });

  const messages: ConsumerMessages = await consumer.consume({ max_messages: concurrency });
  const loop = (async () => {
    for await (const message of messages) {
      settler.take(message);
      if (settler.size >= concurrency) await settler.one();
    }
  })()
    .catch((error: unknown) => errors.failed(error, 'consume'))
    .finally(() => settler.all());

  return {
    inbox,
    async stop() {
      await messages.close();
      await loop;
    },
  };
}
