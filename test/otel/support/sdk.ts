import { type Attributes, context, type SpanContext, type trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  type Sampler,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

// Spans of an async function must find their parent across awaits, as in an application with the Node SDK.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

/** The real SDK with its in-memory exporters: what the tests read spans and metrics from. */
export function sdk(options: { sampler?: Sampler } = {}) {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(spans)],
    ...(options.sampler === undefined ? {} : { sampler: options.sampler }),
  });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Collected on demand (forceFlush), never on a timer: a test reads exactly what happened before it asks.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    /** Spans ended so far. */
    spans: () => spans.getFinishedSpans(),
    reset: () => spans.reset(),
    /** The latest collection of every metric, by name. */
    async metrics(): Promise<Map<string, MetricData>> {
      exporter.reset();
      await meterProvider.forceFlush();
      const byName = new Map<string, MetricData>();
      for (const resource of exporter.getMetrics())
        for (const scope of resource.scopeMetrics)
          for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
      return byName;
    },
    /** A tracer of the test's own, for the caller's spans (an HTTP request, a handler's query). */
    tracer: tracerProvider.getTracer('test'),
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

export type Sdk = ReturnType<typeof sdk>;

/** The data points of a metric whose attributes include `match`. */
export function points(metric: MetricData | undefined, match: Attributes = {}): DataPoint<unknown>[] {
  if (metric === undefined) return [];
  return (metric.dataPoints as DataPoint<unknown>[]).filter((point) =>
    Object.entries(match).every(([name, value]) => point.attributes[name] === value),
  );
}

/** The sum of a counter's points matching `match`. */
export function total(metric: MetricData | undefined, match: Attributes = {}): number {
  return points(metric, match).reduce((sum, point) => sum + (point.value as number), 0);
}

/** How many values a histogram recorded under `match`. */
export function recorded(metric: MetricData | undefined, match: Attributes = {}): number {
  return points(metric, match).reduce((sum, point) => sum + (point.value as Histogram).count, 0);
}

/** Spans named `name`. */
export function named(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

/** The one span named `name` (fails the test when there are none or several). */
export function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = named(spans, name);
  if (found.length !== 1)
    throw new Error(`expected one span named ${name}, found ${found.length}: ${spans.map((s) => s.name)}`);
  return found[0]!;
}

/** True when `child`'s parent is `parent`. */
export function isChildOf(child: ReadableSpan, parent: ReadableSpan | SpanContext): boolean {
  const context =
    'spanContext' in parent && typeof parent.spanContext === 'function' ? parent.spanContext() : parent;
  return (
    child.parentSpanContext?.spanId === (context as SpanContext).spanId &&
    child.spanContext().traceId === (context as SpanContext).traceId
  );
}

/** Runs `work` inside a span of the test's own (a request), returning the span's context and the result. */
export async function within<T>(
  tracer: ReturnType<typeof trace.getTracer>,
  name: string,
  work: () => Promise<T>,
): Promise<{ parent: SpanContext; result: T }> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return { parent: span.spanContext(), result: await work() };
    } finally {
      span.end();
    }
  });
}
