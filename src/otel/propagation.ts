/**
 * @module Trace context across the outbox: the active context written into an event's headers when it is added, and
 * read back from a message's headers when it is consumed, through the registered propagator or, without one, W3C
 * `traceparent` itself.
 */
import {
  type Context,
  context,
  createTraceState,
  isSpanContextValid,
  propagation,
  type SpanContext,
  trace,
} from '@opentelemetry/api';

// W3C Trace Context, version 00: trace id, parent (span) id, flags.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The active context as message headers: whatever the registered propagator writes (W3C Trace Context and
 * Baggage with the Node SDK's defaults, B3 if configured so), and at least a W3C `traceparent` when there is an
 * active span, so an outbox event carries its trace even where no propagator was registered.
 */
export function traceHeaders(active: Context = context.active()): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  const span = trace.getSpanContext(active);
  if (carrier.traceparent === undefined && span !== undefined && isSpanContextValid(span)) {
    carrier.traceparent = `00-${span.traceId}-${span.spanId}-${span.traceFlags.toString(16).padStart(2, '0')}`;
    const state = span.traceState?.serialize();
    if (state) carrier.tracestate = state;
  }
  return Object.keys(carrier).length === 0 ? undefined : carrier;
}

/**
 * The context a message's headers carry, on top of `base`: read by the registered propagator, else from the W3C
 * `traceparent` itself. Undefined when the headers hold no valid trace.
 */
export function contextFrom(
  headers: Readonly<Record<string, string>> | undefined,
  base: Context = context.active(),
): Context | undefined {
  if (headers === undefined) return undefined;
  const extracted = propagation.extract(base, headers);
  const found = trace.getSpanContext(extracted);
  if (found !== undefined && isSpanContextValid(found) && found !== trace.getSpanContext(base))
    return extracted;
  const parsed = parseTraceparent(headers.traceparent, headers.tracestate);
  return parsed === undefined ? undefined : trace.setSpanContext(extracted, parsed);
}

function parseTraceparent(value: string | undefined, state: string | undefined): SpanContext | undefined {
  const match = value === undefined ? null : TRACEPARENT.exec(value.trim());
  if (match === null) return undefined;
  const span: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16) & 1,
    isRemote: true,
    ...(state ? { traceState: createTraceState(state) } : {}),
  };
  return isSpanContextValid(span) ? span : undefined;
}
