/**
 * @module `oncely/otel`: OpenTelemetry traces and metrics for the engine, the HTTP adapters, the inbox and the
 * outbox. Needs `@opentelemetry/api` (an optional peer); what records and exports is the SDK the application
 * registers. See docs/operations.md for every span, attribute and metric.
 */
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { InvalidOptionsError } from '../core/errors.js';
import type { EngineProbe, Instrumentation } from '../core/instrumentation.js';
import type { Store } from '../core/store.js';
import { knownOptions } from '../core/validate.js';
import type {
  InboxInstrumentation,
  InboxProbe,
  OutboxInstrumentation,
  RelayInstrumentation,
  RelayProbe,
} from '../messaging/instrumentation.js';
import { engineProbe } from './execution.js';
import { Telemetry } from './instruments.js';
import { inboxProbe, relayProbe } from './messaging.js';
import { type ObserveOutboxOptions, type OutboxStatsSource, observeOutbox } from './outbox-gauges.js';
import { traceHeaders } from './propagation.js';

export { ATTR, type ExecutionOutcome, METRIC, type MetricDefinition, SEMCONV } from './names.js';
export type { ObserveOutboxOptions, OutboxStatsSource } from './outbox-gauges.js';

export interface OtelOptions {
  /** Where spans go. Default: the global tracer provider (the one the SDK registered, whenever it does). */
  readonly tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global meter provider, looked up at the first measurement. */
  readonly meterProvider?: MeterProvider;
}

/**
 * The OpenTelemetry instrumentation: pass the same object as `instrumentation` to every part that should report
 * (an engine, `idempotent()`, an HTTP adapter, an `Inbox` or broker consumer, an `Outbox`, an `OutboxRelay`).
 */
export class OtelInstrumentation
  implements Instrumentation, InboxInstrumentation, RelayInstrumentation, OutboxInstrumentation
{
  readonly #telemetry: Telemetry;

  constructor(options: OtelOptions = {}) {
    if (options === null || typeof options !== 'object')
      throw new InvalidOptionsError('otel: options must be an object');
    knownOptions('otel', options, ['tracerProvider', 'meterProvider']);
    if (options.tracerProvider !== undefined && typeof options.tracerProvider?.getTracer !== 'function')
      throw new InvalidOptionsError('otel: tracerProvider must be an OpenTelemetry TracerProvider');
    if (options.meterProvider !== undefined && typeof options.meterProvider?.getMeter !== 'function')
      throw new InvalidOptionsError('otel: meterProvider must be an OpenTelemetry MeterProvider');
    this.#telemetry = new Telemetry(options.tracerProvider, options.meterProvider);
  }

  /** @internal Called by each `Engine` with its store. */
  engine(store: Store): EngineProbe {
    return engineProbe(this.#telemetry, store);
  }

  /** @internal Called by each `Inbox` with its scope. */
  inbox(scope: string): InboxProbe {
    return inboxProbe(this.#telemetry, scope);
  }

  /** @internal Called by each `OutboxRelay` with its publisher's name. */
  relay(publisher: string): RelayProbe {
    return relayProbe(this.#telemetry, publisher);
  }

  /** The active trace context as headers (`traceparent`, …): what `Outbox` saves with each event. */
  traceHeaders(): Record<string, string> | undefined {
    return traceHeaders();
  }

  /**
   * Reports an outbox table's backlog (`oncely.outbox.pending`), oldest pending age and dead letters as gauges,
   * counted once per metric collection. `db` is a `pg` Pool; call it in one process per table.
   *
   * @example
   * const telemetry = otel();
   * const gauges = telemetry.observeOutbox(pool);
   * process.on('SIGTERM', () => gauges.stop());
   */
  observeOutbox(db: OutboxStatsSource, options: ObserveOutboxOptions = {}): { stop(): void } {
    return observeOutbox(this.#telemetry.meter, db, options);
  }
}

/**
 * OpenTelemetry for oncely. One object for the whole application: give it as `instrumentation` to every part.
 *
 * @example
 * import { idempotency } from 'oncely/express';
 * import { otel } from 'oncely/otel';
 *
 * const instrumentation = otel();
 * app.post('/payments', idempotency({ store, instrumentation }), handler);
 * const outbox = new Outbox({ instrumentation });
 * const relay = new OutboxRelay({ pool, publisher, instrumentation });
 */
export function otel(options: OtelOptions = {}): OtelInstrumentation {
  return new OtelInstrumentation(options);
}
