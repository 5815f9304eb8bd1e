/**
 * @module `NatsPublisher`: the outbox relay's publisher for NATS JetStream, which deduplicates retried publishes by
 * `Nats-Msg-Id` (the outbox id) within the stream's duplicate window, checked once per stream against the relay's
 * retry horizon.
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { InvalidOptionsError } from '../../../core/errors.js';
import { knownOptions, optionalFunction, wholeNumber } from '../../../core/validate.js';
import type { OutboxMessage, Publisher, PublisherContext } from '../../publisher.js';

export interface NatsPublisherOptions {
  /** A JetStream client of the caller's connection: `jetstream(nc)`. */
  readonly jetstream: JetStreamClient;
  /** The subject of a message. Default: its topic. */
  readonly subject?: (message: OutboxMessage) => string;
  /** How long to wait for the stream's PubAck. Default 5,000 ms. */
  readonly timeoutMs?: number;
}

/**
 * Publishes to NATS JetStream with `Nats-Msg-Id` set to the outbox id, so the stream drops a retried publish
 * (relay crash between the PubAck and the mark, a lost PubAck) within its `duplicate_window`. On the first
 * publish into each stream it checks that window against the relay's retry horizon and warns when shorter.
 * Headers carry the outbox headers plus `Content-Type`, `Oncely-Topic` and `Oncely-Key`.
 *
 * @example
 * import { jetstream } from '@nats-io/jetstream';
 * const relay = new OutboxRelay({ pool, publisher: new NatsPublisher({ jetstream: jetstream(nc) }) });
 */
export class NatsPublisher implements Publisher {
  readonly name = 'nats';
  readonly delivery = 'at-least-once' as const;
  readonly #js: JetStreamClient;
  readonly #subject: (message: OutboxMessage) => string;
  readonly #timeoutMs: number;
  readonly #checked = new Set<string>();
  /** Publishes the stream acknowledged as duplicates (a retry of a message it already had): dropped, not stored. */
  duplicates = 0;
  #context: PublisherContext | undefined;
  #manager: Promise<JetStreamManager> | undefined;

  constructor(options: NatsPublisherOptions) {
    if (options === null || typeof options !== 'object')
      throw new InvalidOptionsError('NatsPublisher: options are required');
    knownOptions('NatsPublisher', options, ['jetstream', 'subject', 'timeoutMs']);
    if (options.jetstream === null || typeof options.jetstream?.publish !== 'function') {
      throw new InvalidOptionsError('NatsPublisher: jetstream must be a JetStream client (jetstream(nc))');
    }
    optionalFunction('subject', options.subject);
    this.#js = options.jetstream;
    this.#subject = options.subject ?? ((message) => message.topic);
    this.#timeoutMs = wholeNumber('timeoutMs', options.timeoutMs, 5_000, { min: 1 });
  }

  async prepare(context: PublisherContext): Promise<void> {
    this.#context = context;
  }

  async publish(message: OutboxMessage): Promise<void> {
    const headers = natsHeaders();
    for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
    headers.set('Content-Type', message.contentType);
    headers.set('Oncely-Topic', message.topic);
    if (message.key !== null) headers.set('Oncely-Key', message.key);
    const ack = await this.#js.publish(this.#subject(message), message.payload, {
      msgID: message.id,
      headers,
      timeout: this.#timeoutMs,
    });
    if (ack.duplicate) this.duplicates++;
    const context = this.#context;
    if (context !== undefined && !this.#checked.has(ack.stream)) {
      // Once per stream, also when the check fails: retrying it on every publish would flood the warnings.
      this.#checked.add(ack.stream);
      void this.checkDuplicateWindow(ack.stream, context).catch((error: unknown) =>
        context.warn(
          `could not read the duplicate_window of NATS stream "${ack.stream}" to compare it with the relay's retry ` +
            `horizon of ${context.retryHorizonMs} ms (${error instanceof Error ? error.message : String(error)})`,
        ),
      );
    }
  }

  /**
   * Warns (through the relay's events) when `stream`'s duplicate window is shorter than the retry horizon: a
   * retry later than the window is stored twice, and only an inbox on the consumer side removes it.
   * Resolves with the window in ms.
   */
  async checkDuplicateWindow(stream: string, { retryHorizonMs, warn }: PublisherContext): Promise<number> {
    this.#manager ??= this.#js.jetstreamManager();
    const info = await (await this.#manager).streams.info(stream);
    const windowMs = Number(info.config.duplicate_window ?? 0) / 1_000_000;
    if (windowMs < retryHorizonMs) {
      warn(
        `NATS stream "${stream}" has a duplicate_window of ${windowMs} ms, shorter than the relay's retry horizon of ` +
          `${retryHorizonMs} ms: a message retried after the window is stored twice. Raise duplicate_window ` +
          `(e.g. ${Math.ceil(retryHorizonMs / 60_000)} min) or consume through an inbox.`,
      );
    }
    return windowMs;
  }
}
