/**
 * @module `oncely/otel` for the engine: one span per execution (a child of the caller's active span) with a child
 * span per store call, the engine's events as span events and its outcome as an attribute, and the request, claim,
 * replay and store-duration metrics.
 */
import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { OncelyEvent } from '../core/events.js';
import {
  type EngineProbe,
  type ExecutionProbe,
  NO_EXECUTION,
  type StoreOperation,
} from '../core/instrumentation.js';
import type { Store } from '../core/store.js';
import { seconds, type Telemetry } from './instruments.js';
import { ATTR, type ExecutionOutcome } from './names.js';
import { errorAttributes, type StoreShape, storeShape } from './store-spans.js';

/** An engine's probe: one `OtelExecution` per `begin`, sharing the store's span shapes. */
export function engineProbe(telemetry: Telemetry, store: Store): EngineProbe {
  const shape = storeShape(store);
  return {
    start: (key, scope) =>
      telemetry.recording ? new OtelExecution(telemetry, shape, key, scope) : NO_EXECUTION,
  };
}

// A later outcome replaces an earlier one only when it ranks at least as high: a claim that was fenced stays
// fenced whatever its code did next, a lost lease is not hidden by a release that followed.
const RANK: Record<ExecutionOutcome, number> = {
  acquired: 0,
  takeover: 0,
  replayed: 0,
  conflict: 0,
  mismatch: 0,
  released: 1,
  store_error: 2,
  lease_lost: 3,
  fenced: 4,
};
const FAILED: ReadonlySet<ExecutionOutcome> = new Set(['store_error', 'lease_lost', 'fenced']);

/**
 * One execution as a span (a child of the caller's active span: the HTTP request, the message being processed)
 * with a child span per store call, and its metrics. With no SDK registered the span is a non-recording one:
 * then no attribute, event or child span is made, and the metrics go to the API's no-op meter.
 */
export class OtelExecution implements ExecutionProbe {
  readonly #telemetry: Telemetry;
  readonly #shape: StoreShape;
  readonly #scope: string | undefined;
  readonly #span: Span | undefined;
  /** The caller's context with this execution's span in it: the parent of store spans and of `run`. */
  readonly #context: Context | undefined;
  readonly #startedAt = performance.now();
  #acquiredAt: number | undefined;
  #outcome: ExecutionOutcome | undefined;

  constructor(telemetry: Telemetry, shape: StoreShape, key: string, scope: string | undefined) {
    this.#telemetry = telemetry;
    this.#shape = shape;
    this.#scope = scope;
    const parent = context.active();
    const attributes: Attributes = { [ATTR.keyHash]: key };
    if (scope !== undefined) attributes[ATTR.scope] = scope;
    const span = telemetry.tracer.startSpan(
      scope === undefined ? 'oncely' : `oncely ${scope}`,
      { kind: SpanKind.INTERNAL, attributes },
      parent,
    );
    if (span.isRecording()) {
      this.#span = span;
      this.#context = trace.setSpan(parent, span);
    }
  }

  store<T>(operation: StoreOperation, call: () => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    const parent = this.#context;
    // A store span only under a recording execution: an unsampled request pays for no span at all.
    let span: Span | undefined;
    if (parent !== undefined) {
      const { name, attributes } = this.#shape.span(operation);
      span = this.#telemetry.tracer.startSpan(name, { kind: this.#shape.kind, attributes }, parent);
    }
    // The call runs in the store span's context, so a driver's own spans (ioredis, pg) nest under it.
    const pending = span === undefined ? call() : context.with(trace.setSpan(parent!, span), call);
    return pending.then(
      (result) => {
        this.#stored(operation, startedAt, span, undefined);
        return result;
      },
      (error: unknown) => {
        this.#stored(operation, startedAt, span, error);
        throw error;
      },
    );
  }

  run<T>(code: () => T): T {
    return this.#context === undefined ? code() : context.with(this.#context, code);
  }

  event(event: OncelyEvent): void {
    const span = this.#span;
    switch (event.type) {
      case 'acquired':
      case 'takeover':
        this.#acquiredAt = performance.now();
        this.#become(event.type);
        span?.setAttributes({
          [ATTR.attempt]: event.attempt,
          [ATTR.fencingToken]: event.token,
          [ATTR.takeover]: event.type === 'takeover',
        });
        break;
      case 'replayed':
      case 'conflict':
      case 'mismatch':
        this.#become(event.type);
        break;
      case 'released':
        this.#become('released');
        span?.setAttribute(ATTR.releaseReason, event.reason);
        break;
      case 'fenced':
        this.#become('fenced');
        span?.setAttribute(ATTR.fencedOperation, event.operation);
        break;
      case 'leaseLost':
        this.#become('lease_lost');
        break;
      default:
        break;
    }
    span?.addEvent(`oncely.${event.type}`);
  }

  // The engine ends an execution once: when begin answers without a claim, or when its claim settles.
  end(error?: unknown): void {
    // No outcome yet means begin itself failed; an error after a claim is the complete that failed.
    if (error !== undefined || this.#outcome === undefined) this.#become('store_error');
    const outcome = this.#outcome!;
    const now = performance.now();
    const { instruments } = this.#telemetry;
    const attributes: Attributes =
      this.#scope === undefined
        ? { [ATTR.outcome]: outcome }
        : { [ATTR.outcome]: outcome, [ATTR.scope]: this.#scope };
    instruments.requests.add(1, attributes);
    if (this.#acquiredAt !== undefined)
      instruments.claimDuration.record(seconds(this.#acquiredAt, now), attributes);
    if (outcome === 'replayed') instruments.replayDuration.record(seconds(this.#startedAt, now), attributes);
    const span = this.#span;
    if (span === undefined) return;
    span.setAttribute(ATTR.outcome, outcome);
    if (FAILED.has(outcome)) {
      if (error !== undefined) span.setAttributes(errorAttributes(this.#shape.system, error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: describe(outcome, error) });
    }
    span.end();
  }

  #become(outcome: ExecutionOutcome): void {
    if (this.#outcome === undefined || RANK[outcome] >= RANK[this.#outcome]) this.#outcome = outcome;
  }

  #stored(operation: StoreOperation, startedAt: number, span: Span | undefined, error: unknown): void {
    const failed = error !== undefined;
    const base = this.#shape.metric(operation);
    const errorAttrs = failed ? errorAttributes(this.#shape.system, error) : undefined;
    this.#telemetry.instruments.storeDuration.record(
      seconds(startedAt),
      errorAttrs === undefined ? base : { ...base, ...errorAttrs },
    );
    if (span === undefined) return;
    if (errorAttrs !== undefined) {
      span.setAttributes(errorAttrs);
      span.setStatus({ code: SpanStatusCode.ERROR, message: describe('store_error', error) });
    }
    span.end();
  }
}

function describe(outcome: ExecutionOutcome, error: unknown): string {
  if (error instanceof Error) return error.message;
  return outcome;
}
