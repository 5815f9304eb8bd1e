/**
 * @module Where `oncely/otel` gets its tracer, meter and instruments: made at first use, with the global meter
 * provider looked up again until the SDK has registered one, since the metrics API has no proxy and an early meter
 * would stay a no-op.
 */
import {
  type Counter,
  createNoopMeter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  ProxyTracerProvider,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import version from '../version.generated.js';
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

// The API's own no-ops, reached through its public exports: a proxy with no delegate hands out the no-op tracer
// provider, and every no-op meter is an instance of one class.
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();
const NoopMeter = createNoopMeter().constructor;

/**
 * Where an `otel()` gets its tracer and meter. The global meter provider is looked up again whenever it may have
 * changed, not once when `otel()` is called: the metrics API has no proxy, so a meter taken before the SDK
 * registered would otherwise stay a no-op forever.
 */
export class Telemetry {
  readonly tracer: Tracer;
  readonly #tracerProvider: TracerProvider | undefined;
  readonly #meterProvider: MeterProvider | undefined;
  /** The provider `#meter` and `#instruments` came from. */
  #meterFrom: MeterProvider | undefined;
  #meter: Meter | undefined;
  #instruments: Instruments | undefined;

  constructor(tracerProvider: TracerProvider | undefined, meterProvider: MeterProvider | undefined) {
    this.#tracerProvider = tracerProvider;
    // The version goes with the name: backends group and filter by it (instrumentationScope.version).
    this.tracer = (tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE, version);
    this.#meterProvider = meterProvider;
  }

  /**
   * False while nothing could record: no provider was passed, and neither a tracer provider nor a meter provider
   * is registered (only `@opentelemetry/api` is installed). An engine then runs the execution uninstrumented, so
   * `otel()` without an SDK costs nothing per request. Asked per execution (two global lookups), so an SDK
   * registered later is picked up by the next one.
   */
  get recording(): boolean {
    if (this.#tracerProvider !== undefined || this.#meterProvider !== undefined) return true;
    const tracers = trace.getTracerProvider();
    const delegate = tracers instanceof ProxyTracerProvider ? tracers.getDelegate() : tracers;
    return delegate !== NOOP_TRACER_PROVIDER || !(this.meter instanceof NoopMeter);
  }

  get meter(): Meter {
    const provider = this.#meterProvider ?? metrics.getMeterProvider();
    if (provider !== this.#meterFrom || this.#meter === undefined) {
      this.#meterFrom = provider;
      this.#meter = provider.getMeter(SCOPE, version);
      this.#instruments = undefined;
    }
    return this.#meter;
  }

  get instruments(): Instruments {
    const meter = this.meter;
    this.#instruments ??= createInstruments(meter);
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
