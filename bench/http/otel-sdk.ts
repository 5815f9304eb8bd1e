// The OpenTelemetry SDK as an application registers it, for the otel variants of server.ts: an AsyncLocalStorage
// context manager, a batch span processor and a periodic metric reader, exporting into memory (cleared every
// second, so a long run does not grow) instead of over the network, so the numbers are the SDK's own CPU.
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';

export function registerSdk(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const spans = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans)] }));
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  metrics.setGlobalMeterProvider(
    new MeterProvider({
      readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 5_000 })],
    }),
  );
  setInterval(() => {
    spans.reset();
    exporter.reset();
  }, 1_000).unref();
}
