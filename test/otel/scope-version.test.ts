// The instrumentation scope of oncely's spans and metrics carries the package's version (issue 23: it was
// undefined), from the sources here and from the built package in the documented setup, and that setup, as
// docs/operations.md prints it, yields metrics as well as spans.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { idempotent, MemoryStore } from '../../src/index.js';
import { METRIC, otel } from '../../src/otel/index.js';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string };

describe('instrumentation scope', () => {
  it('spans and metrics name the scope oncely with the package version (sources)', async () => {
    const spans = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    // Collected on demand (forceFlush), never on the timer.
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    try {
      const charge = idempotent(async (id: string) => ({ paid: id }), {
        key: (id) => id,
        scope: 'charge',
        store: new MemoryStore(),
        instrumentation: otel({ tracerProvider, meterProvider }),
      });
      await charge('order-1');
      const finished = spans.getFinishedSpans();
      expect(finished.length).toBeGreaterThan(0);
      for (const span of finished)
        expect(span.instrumentationScope).toMatchObject({ name: 'oncely', version });
      await meterProvider.forceFlush();
      const scopes = exporter.getMetrics().flatMap((resource) => resource.scopeMetrics);
      const oncely = scopes.find((s) => s.metrics.some((m) => m.descriptor.name === METRIC.requests.name));
      expect(oncely?.scope).toMatchObject({ name: 'oncely', version });
    } finally {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    }
  });
});

describe('docs/operations.md "How to enable"', () => {
  it('the setup without sdk-node, as printed, exports oncely metrics and spans with the package version (built package)', async () => {
    const page = readFileSync(new URL('docs/operations.md', root), 'utf8');
    const block = [...page.matchAll(/```ts\n([\s\S]*?)```/g)]
      .map((match) => match[1]!)
      .find(
        (code) => code.includes('PeriodicExportingMetricReader') && code.includes('setGlobalMeterProvider'),
      );
    expect(
      block,
      'operations.md shows no setup that registers a meter provider with a metric reader',
    ).toBeDefined();
    // The reader's own exporters (OTLP in production) become in-memory ones; nothing else of the block changes.
    const declared = /^declare const (spanExporter|metricExporter): \w+;.*$/gm;
    expect(block!.match(declared)).toHaveLength(2);
    const program = `${block!.replace(declared, (_, name: string) =>
      name === 'spanExporter'
        ? 'const spanExporter = new InMemorySpanExporter();'
        : 'const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);',
    )}
import { InMemorySpanExporter, type BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, type MeterProvider } from '@opentelemetry/sdk-metrics';
import { ProxyTracerProvider } from '@opentelemetry/api';
import { idempotent, MemoryStore } from 'oncely';
import { otel } from 'oncely/otel';

const charge = idempotent(async (id: string) => ({ paid: id }), {
  key: (id) => id,
  scope: 'charge',
  store: new MemoryStore(),
  instrumentation: otel(),
});
await charge('order-1');
await charge('order-1');
await (metrics.getMeterProvider() as MeterProvider).forceFlush();
await ((trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as BasicTracerProvider).forceFlush();
const metricScopes = metricExporter
  .getMetrics()
  .flatMap((resource) => resource.scopeMetrics)
  .map((scope) => ({ scope: scope.scope, names: scope.metrics.map((m) => m.descriptor.name) }));
const spanScopes = spanExporter.getFinishedSpans().map((span) => span.instrumentationScope);
console.log(JSON.stringify({ metricScopes, spanScopes, resolved: import.meta.resolve('oncely/otel') }));
`;
    // Inside the package, so 'oncely' resolves to the built package (dist) by its own name; an empty tsconfig of its
    // own keeps tsx from mapping it to the sources through the repository's paths.
    const dir = new URL(`.tmp/otel-setup-${process.pid}/`, root);
    await mkdir(dir, { recursive: true });
    const file = new URL('instrumentation-and-app.ts', dir);
    try {
      await writeFile(file, program);
      const tsconfig = new URL('tsconfig.json', dir);
      await writeFile(tsconfig, '{ "compilerOptions": { "module": "nodenext", "target": "es2022" } }');
      const { stdout } = await run(process.execPath, ['--import', 'tsx', file.pathname], {
        cwd: root.pathname,
        env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig.pathname },
        timeout: 30_000,
      });
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
        metricScopes: { scope: { name: string; version?: string }; names: string[] }[];
        spanScopes: { name: string; version?: string }[];
        resolved: string;
      };
      expect(result.resolved).toMatch(/\/dist\/otel\/index\.js$/);
      const oncely = result.metricScopes.find((s) => s.scope.name === 'oncely');
      expect(oncely?.scope.version).toBe(version);
      expect(oncely?.names).toEqual(
        expect.arrayContaining([METRIC.requests.name, METRIC.storeDuration.name]),
      );
      expect(result.spanScopes.length).toBeGreaterThan(0);
      for (const scope of result.spanScopes) expect(scope).toMatchObject({ name: 'oncely', version });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
