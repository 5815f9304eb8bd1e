/**
 * @module What the broker consumers (RabbitMQ, NATS JetStream, Redis Streams) do after the inbox's outcome, once:
 * acknowledge, retry later or dead-letter through the broker's own calls, then show the outcome to `onOutcome`;
 * and the messages in hand, tracked so that `stop()` resolves once each is settled.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import { optionalFunction } from '../../core/validate.js';
import { actionFor, Inbox, type InboxHandler, type InboxOptions, type InboxOutcome } from '../consumer.js';
import { type ConsumerErrorHandler, type ErrorReporter, errorReporter } from './consumer-errors.js';
import { retryDelayMs } from './retry-delay.js';

/** What every broker consumer returns: its inbox, and a graceful stop. */
export interface InboxConsumer<M, R> {
  readonly inbox: Inbox<M, R>;
  /** Stops taking messages and resolves once the messages in hand are settled. */
  stop(): Promise<void>;
}

/** The options of `consumeIdempotently`, checked to be an object before they are read. */
export function consumerOptions<T>(options: T): T {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionsError('consumeIdempotently: options are required');
  return options;
}

/** The options every broker consumer takes besides its broker's own: the inbox's, and the two hooks. */
export interface SharedConsumeOptions<M> extends Omit<InboxOptions<M>, 'messageId'> {
  /** The message's id. Default: the broker's deduplication id (each broker's options say which). */
  readonly messageId?: (message: M) => string;
  /** Sees every outcome (for metrics and logs). */
  readonly onOutcome?: OutcomeHook<M>;
  /** Receives every error the consumer recovers from; each broker's options list its steps. */
  readonly onError?: ConsumerErrorHandler;
}

/** What a broker consumer builds from its shared options: its inbox, the checked `onOutcome`, its error path. */
export interface ConsumerParts<M, R> {
  readonly inbox: Inbox<M, R>;
  readonly onOutcome: OutcomeHook<M> | undefined;
  readonly errors: ErrorReporter;
}

/**
 * Checks the hooks and makes the inbox (with the broker's default message id) and the error path reported as
 * `source`. Called once the broker's own options are checked, so a bad one fails before an inbox exists.
 */
export function consumerParts<M, R>(
  handler: InboxHandler<M, R>,
  options: SharedConsumeOptions<M>,
  defaultMessageId: (message: M) => string,
  source: string,
): ConsumerParts<M, R> {
  const { messageId = defaultMessageId, onOutcome, onError, ...inboxOptions } = options;
  optionalFunction('onOutcome', onOutcome);
  optionalFunction('onError', onError);
  return {
    inbox: new Inbox(handler, { ...inboxOptions, messageId }),
    onOutcome,
    errors: errorReporter(source, onError),
  };
}

/** A broker's three ways to settle a message. */
export interface BrokerSettle<M> {
  /** The outcome is stored (processed, or a duplicate). */
  ack(message: M): void;
  /** Nothing is stored (busy, failed): the message should come back after about `delayMs`. */
  retry(message: M, delayMs: number): void;
  /** Parked, or no usable id: it must leave the queue for the dead-letter path. */
  deadLetter(message: M, outcome: InboxOutcome<unknown>): void;
}

export type OutcomeHook<M> = (outcome: InboxOutcome<unknown>, message: M) => void;

/** Settles `message` as its outcome says; `handle` has resolved, so what is acknowledged is stored. */
export function settleAs<M>(
  broker: BrokerSettle<M>,
  message: M,
  outcome: InboxOutcome<unknown>,
  maxRetryDelayMs: number,
): void {
  const action = actionFor(outcome);
  if (action === 'ack') broker.ack(message);
  else if (action === 'retry') broker.retry(message, retryDelayMs(outcome, maxRetryDelayMs));
  else broker.deadLetter(message, outcome);
}

/**
 * Shows an outcome to the hook. Called after the message is settled: a throwing hook must not make the caller
 * settle a message twice (RabbitMQ closes the channel on an unknown delivery tag).
 */
export function showOutcome<M>(
  onOutcome: OutcomeHook<M> | undefined,
  outcome: InboxOutcome<unknown>,
  message: M,
  errors: ErrorReporter,
): void {
  if (onOutcome === undefined) return;
  try {
    onOutcome(outcome, message);
  } catch (error) {
    errors.failed(error, 'onOutcome');
  }
}

export interface MessageSettlerOptions<M> {
  /** The inbox's `handle`, with what this broker tells it about the delivery. */
  readonly handle: (message: M) => Promise<InboxOutcome<unknown>>;
  readonly broker: BrokerSettle<M>;
  readonly maxRetryDelayMs: number;
  readonly onOutcome: OutcomeHook<M> | undefined;
  readonly errors: ErrorReporter;
  /** Settling threw (the broker call failed): give the message back however the broker still can. */
  readonly settleFailed: (error: unknown, message: M) => void;
}

/** One message at a time from the broker's callback or loop: handled, settled, shown, and tracked until then. */
export class MessageSettler<M> {
  readonly #options: MessageSettlerOptions<M>;
  readonly #inFlight = new Set<Promise<void>>();

  constructor(options: MessageSettlerOptions<M>) {
    this.#options = options;
  }

  /** Messages taken and not yet settled. */
  get size(): number {
    return this.#inFlight.size;
  }

  /** Starts handling `message`; never rejects (a failure goes to `settleFailed`). */
  take(message: M): void {
    const task: Promise<void> = this.#settle(message)
      .catch((error: unknown) => this.#options.settleFailed(error, message))
      .finally(() => this.#inFlight.delete(task));
    this.#inFlight.add(task);
  }

  /** Resolves when any message in hand is settled. */
  one(): Promise<void> {
    return Promise.race(this.#inFlight);
  }

  /** Resolves once every message in hand is settled. */
  async all(): Promise<void> {
    await Promise.all(this.#inFlight);
  }

  async #settle(message: M): Promise<void> {
    const { handle, broker, maxRetryDelayMs, onOutcome, errors } = this.#options;
    const outcome = await handle(message);
    settleAs(broker, message, outcome, maxRetryDelayMs);
    errors.recovered();
    showOutcome(onOutcome, outcome, message, errors);
  }
}
