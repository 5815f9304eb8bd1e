import { context, createTraceState, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { contextFrom, traceHeaders } from '../../src/otel/propagation.js';
import { sdk } from './support/sdk.js';

const telemetry = sdk();
const tracer = telemetry.tracer;
afterAll(() => telemetry.shutdown());
afterEach(() => propagation.disable());

describe('trace headers of an outbox event', () => {
  it('without a registered propagator: a W3C traceparent of the active span all the same, nothing outside a span', () => {
    expect(traceHeaders()).toBeUndefined();
    tracer.startActiveSpan('request', (span) => {
      const { traceId, spanId } = span.spanContext();
      expect(traceHeaders()).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
      span.end();
    });
  });

  it('with the W3C propagator registered (the Node SDK default): its headers, tracestate included', () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const remote = trace.setSpanContext(context.active(), {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      isRemote: true,
      traceState: createTraceState('vendor=value'),
    });
    expect(traceHeaders(remote)).toEqual({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'vendor=value',
    });
    const read = trace.getSpanContext(contextFrom(traceHeaders(remote))!);
    expect(read).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' });
  });

  it('reads a traceparent with no propagator registered, and ignores malformed or all-zero ones', () => {
    const read = (traceparent: string) => contextFrom({ traceparent });
    const valid = read('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00');
    expect(trace.getSpanContext(valid!)).toMatchObject({ traceFlags: 0, isRemote: true });
    expect(read('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeUndefined();
    expect(read('garbage')).toBeUndefined();
    expect(contextFrom(undefined)).toBeUndefined();
    expect(contextFrom({})).toBeUndefined();
  });
});
