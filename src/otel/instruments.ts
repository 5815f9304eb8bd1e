import {
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { METRIC, type MetricDefinition, SCOPE } from './names.js';

/** The instruments of one `otel()`, made at first use. */
export interface Instruments {
  readonly requests: Counter;
  readonly storeDuration: Histogram;
  readonly claimDuration: Histogram;
  readonly replayDuration: Histogram;
  readonly inboxMessages: Counter;
  readonly inboxDuration: Histogram;
  readonly outboxPublished: Counter;
  readonly outboxFailed: Counter;
  readonly outboxDeadLettered: Counter;
  readonly outboxPublishDuration: Histogram;
  readonly outboxLag: Histogram;
}

/**
 * Where an `otel()` gets its tracer and meter. The meter is looked up at the first measurement, not when `otel()`
 * is called: the metrics API has no proxy, so a meter taken before the SDK registered would stay a no-op forever.
 */
export class Telemetry {
  readonly tracer: Tracer;
  readonly #meterProvider: MeterProvider | undefined;
  #meter: Meter | undefined;
  #instruments: Instruments | undefined;

  constructor(tracerProvider: TracerProvider | undefined, meterProvider: MeterProvider | undefined) {
    this.tracer = (tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
    this.#meterProvider = meterProvider;
  }

  get meter(): Meter {
    this.#meter ??= (this.#meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
    return this.#meter;
  }

  get instruments(): Instruments {
    this.#instruments ??= createInstruments(this.meter);
    return this.#instruments;
  }
}

function createInstruments(meter: Meter): Instruments {
  const counter = (m: MetricDefinition) =>
    meter.createCounter(m.name, { unit: m.unit, description: m.description });
  const histogram = (m: MetricDefinition) =>
    meter.createHistogram(m.name, {
      unit: m.unit,
      description: m.description,
      ...(m.buckets === undefined ? {} : { advice: { explicitBucketBoundaries: [...m.buckets] } }),
    });
  return {
    requests: counter(METRIC.requests),
    storeDuration: histogram(METRIC.storeDuration),
    claimDuration: histogram(METRIC.claimDuration),
    replayDuration: histogram(METRIC.replayDuration),
    inboxMessages: counter(METRIC.inboxMessages),
    inboxDuration: histogram(METRIC.inboxDuration),
    outboxPublished: counter(METRIC.outboxPublished),
    outboxFailed: counter(METRIC.outboxFailed),
    outboxDeadLettered: counter(METRIC.outboxDeadLettered),
    outboxPublishDuration: histogram(METRIC.outboxPublishDuration),
    outboxLag: histogram(METRIC.outboxLag),
  };
}

/** Seconds between two `performance.now()` readings. */
export const seconds = (from: number, to = performance.now()): number => (to - from) / 1_000;
