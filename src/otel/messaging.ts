/**
 * @module `oncely/otel` for messaging: the inbox's CONSUMER span per delivery, continuing the trace the message
 * carries, and the relay's PRODUCER span per publish attempt, linked to the trace that wrote the event, with the
 * inbox and outbox metrics beside them.
 */
import {
  type Attributes,
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type {
  Delivery,
  InboxOutcomeKind,
  InboxProbe,
  PublishOutcome,
  RelayProbe,
} from '../messaging/instrumentation.js';
import type { RelayEvent } from '../messaging/outbox/relay-events.js';
import type { OutboxMessage } from '../messaging/publisher.js';
import { seconds, type Telemetry } from './instruments.js';
import { ATTR, SEMCONV } from './names.js';
import { contextFrom } from './propagation.js';
import { errorAttributes } from './store-spans.js';

// Outcomes that need an operator: a poison message, a handler or store failure, a message without an id.
const INBOX_FAILED: ReadonlySet<InboxOutcomeKind> = new Set(['parked', 'failed', 'invalid']);

/**
 * Each delivery as a CONSUMER span `process <destination>` that continues the trace in the message's headers (the
 * request that wrote the outbox event), so the engine's execution span and the handler's spans nest under it.
 */
export function inboxProbe(telemetry: Telemetry, scope: string): InboxProbe {
  const label = `inbox:${scope}`;
  return {
    handle(delivery: Delivery, messageId, run) {
      const startedAt = performance.now();
      const parent = contextFrom(delivery.headers) ?? context.active();
      const source = delivery.source;
      const attributes: Attributes = {
        [SEMCONV.messagingOperationName]: 'process',
        [SEMCONV.messagingOperationType]: 'process',
        [ATTR.scope]: label,
      };
      if (source !== undefined) {
        attributes[SEMCONV.messagingSystem] = source.system;
        attributes[SEMCONV.messagingDestination] = source.destination;
        if (source.group !== undefined) attributes[SEMCONV.messagingConsumerGroup] = source.group;
      }
      if (messageId !== undefined) attributes[SEMCONV.messagingMessageId] = messageId;
      const span = telemetry.tracer.startSpan(
        source === undefined ? 'process' : `process ${source.destination}`,
        { kind: SpanKind.CONSUMER, attributes },
        parent,
      );
      const done = (kind: InboxOutcomeKind | undefined, error?: unknown) => {
        const metric: Attributes = { [ATTR.inboxOutcome]: kind ?? 'failed', [ATTR.scope]: label };
        if (source !== undefined) {
          metric[SEMCONV.messagingSystem] = source.system;
          metric[SEMCONV.messagingDestination] = source.destination;
        }
        telemetry.instruments.inboxMessages.add(1, metric);
        telemetry.instruments.inboxDuration.record(seconds(startedAt), metric);
        if (!span.isRecording()) return;
        span.setAttribute(ATTR.inboxOutcome, kind ?? 'failed');
        if (kind === undefined || INBOX_FAILED.has(kind)) {
          if (error !== undefined) span.setAttributes(errorAttributes(undefined, error));
          span.setStatus({ code: SpanStatusCode.ERROR, message: kind ?? 'failed' });
        }
        span.end();
      };
      return context.with(trace.setSpan(parent, span), run).then(
        (outcome) => {
          done(outcome.kind, (outcome as { error?: unknown }).error);
          return outcome;
        },
        (error: unknown) => {
          done(undefined, error);
          throw error;
        },
      );
    },
  };
}

/** The messaging system of a publisher, as OpenTelemetry names it. */
function messagingSystem(publisher: string): string {
  return publisher.startsWith('redis') ? 'redis' : publisher;
}

/**
 * Each publish attempt as a PRODUCER span `publish <topic>`, a root of its own (a relay's batch belongs to no
 * request) linked to the trace that wrote the event; the message keeps that trace's headers, so the consumer
 * continues the writer's trace, not the relay's.
 */
export function relayProbe(telemetry: Telemetry, publisher: string): RelayProbe {
  const system = messagingSystem(publisher);
  return {
    publish(message: OutboxMessage, run: () => Promise<PublishOutcome>): Promise<PublishOutcome> {
      const startedAt = performance.now();
      const written = contextFrom(message.headers, ROOT_CONTEXT);
      const writer = written === undefined ? undefined : trace.getSpanContext(written);
      const links: Link[] = writer === undefined ? [] : [{ context: writer }];
      const span = telemetry.tracer.startSpan(
        `publish ${message.topic}`,
        {
          kind: SpanKind.PRODUCER,
          links,
          attributes: {
            [SEMCONV.messagingSystem]: system,
            [SEMCONV.messagingOperationName]: 'publish',
            [SEMCONV.messagingOperationType]: 'send',
            [SEMCONV.messagingDestination]: message.topic,
            [SEMCONV.messagingMessageId]: message.id,
            [ATTR.outboxAttempt]: message.attempt,
          },
        },
        ROOT_CONTEXT,
      );
      return context.with(trace.setSpan(ROOT_CONTEXT, span), run).then((outcome) => {
        published(telemetry, system, message, outcome, startedAt, span);
        return outcome;
      });
    },
    event(event: RelayEvent) {
      if (event.type === 'failed' && event.dead)
        telemetry.instruments.outboxDeadLettered.add(1, {
          [SEMCONV.messagingSystem]: system,
          [SEMCONV.messagingDestination]: event.topic,
        });
    },
  };
}

function published(
  telemetry: Telemetry,
  system: string,
  message: OutboxMessage,
  outcome: PublishOutcome,
  startedAt: number,
  span: Span,
): void {
  const { instruments } = telemetry;
  const attributes: Attributes = {
    [SEMCONV.messagingSystem]: system,
    [SEMCONV.messagingDestination]: message.topic,
  };
  if (outcome.kind === 'published') {
    instruments.outboxPublished.add(1, attributes);
    instruments.outboxPublishDuration.record(seconds(startedAt), attributes);
    // Database clock at insert against the relay's clock now: skew between the two shows up here.
    instruments.outboxLag.record(Math.max(0, (Date.now() - message.createdAt.getTime()) / 1_000), attributes);
  } else if (outcome.kind === 'failed') {
    const failed = { ...attributes, ...errorAttributes(undefined, outcome.error) };
    instruments.outboxFailed.add(1, failed);
    instruments.outboxPublishDuration.record(seconds(startedAt), failed);
    span.setAttributes(errorAttributes(undefined, outcome.error));
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: outcome.error instanceof Error ? outcome.error.message : 'publish failed',
    });
  } else {
    span.setAttribute(ATTR.outboxUnsent, true);
  }
  span.end();
}
