/**
 * @module The messaging side of the instrumentation hook (`otel()` from `oncely/otel` implements all of it): the
 * outbox saves the caller's trace context with each event, the relay reports each publish, the inbox each delivery.
 * Every method must be cheap and must not throw.
 */
import { InvalidOptionsError } from '../core/errors.js';
import type { Instrumentation } from '../core/instrumentation.js';
import type { RelayEvent } from './outbox/relay-events.js';
import type { OutboxMessage } from './publisher.js';

/** Where a delivery came from, for telemetry: the broker and the stream, subject or queue it was read from. */
export interface MessageSource {
  /** OpenTelemetry's `messaging.system`: `redis`, `nats`, `rabbitmq`. */
  readonly system: string;
  readonly destination: string;
  /** The consumer group (Redis Streams) or durable consumer (JetStream), when there is one. */
  readonly group?: string;
}

/** What a broker helper knows about one delivery besides the message itself. */
export interface Delivery {
  /** See `Inbox#handle`. */
  readonly redelivered?: boolean;
  /** The message's headers: the trace context in them (`traceparent`) is continued while it is handled. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly source?: MessageSource;
}

/** How one handling ended, as the inbox reports it (the `kind` of its `InboxOutcome`). */
export type InboxOutcomeKind = 'processed' | 'duplicate' | 'parked' | 'busy' | 'failed' | 'invalid';

export interface InboxInstrumentation extends Instrumentation {
  /** Called once by each inbox, with its scope. Undefined: this inbox is not instrumented. */
  inbox?(scope: string): InboxProbe | undefined;
}

export interface InboxProbe {
  /** Runs the handling of one delivery (`run`) inside the message's trace and reports how it ended. */
  handle<O extends { readonly kind: InboxOutcomeKind }>(
    delivery: Delivery,
    messageId: string | undefined,
    run: () => Promise<O>,
  ): Promise<O>;
}

/** What became of one publish attempt: confirmed, failed (to be retried or dead-lettered), or never sent. */
export type PublishOutcome =
  | { readonly kind: 'published' }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'unsent' };

export interface RelayInstrumentation {
  /** Called once by each relay, with its publisher's name. Undefined: this relay is not instrumented. */
  relay?(publisher: string): RelayProbe | undefined;
}

export interface RelayProbe {
  /** Runs one publish attempt (`run`, which calls the publisher) and reports how it ended. */
  publish(message: OutboxMessage, run: () => Promise<PublishOutcome>): Promise<PublishOutcome>;
  /** Every relay event, as `onEvent` receives them. */
  event(event: RelayEvent): void;
}

export interface OutboxInstrumentation {
  /** The caller's trace context as headers (`traceparent`, `tracestate`), read at `outbox.add`. */
  traceHeaders?(): Readonly<Record<string, string>> | undefined;
}

/** Validates an `instrumentation` option: an object whose named methods, where present, are functions. */
export function checkHook<T extends object>(
  what: string,
  value: unknown,
  methods: readonly string[],
): T | undefined {
  if (value === undefined) return undefined;
  const ok =
    value !== null &&
    typeof value === 'object' &&
    methods.every((name) => {
      const method = (value as Record<string, unknown>)[name];
      return method === undefined || typeof method === 'function';
    });
  if (!ok)
    throw new InvalidOptionsError(
      `${what}: instrumentation must be an object such as otel() from 'oncely/otel'`,
    );
  return value as T;
}

/** The trace headers W3C Trace Context and Baggage define, read from a broker's own header type. */
export function traceHeadersOf(get: (name: string) => string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of ['traceparent', 'tracestate', 'baggage']) {
    const value = get(name);
    if (value !== undefined && value !== '') headers[name] = value;
  }
  return headers;
}
