import { SpanKind, SpanStatusCode, type TracerProvider } from '@opentelemetry/api';
import { AlwaysOffSampler } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_EXECUTION } from '../../src/core/instrumentation.js';
import {
  Engine,
  InProgressError,
  InvalidOptionsError,
  idempotent,
  isFingerprintMismatchError,
  LeaseLostError,
  MemoryStore,
  type Outcome,
  StoreUnavailableError,
} from '../../src/index.js';
import { ATTR, METRIC, otel, SEMCONV } from '../../src/otel/index.js';
import { scopedKey } from '../../src/store.js';
import { faulty } from '../unit/faulty-store.js';
import { isChildOf, named, only, recorded, sdk, total, within } from './support/sdk.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const outcome = (text: string): Outcome => ({ status: 201, headers: [], body: Buffer.from(text) });

let current: ReturnType<typeof sdk> | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

/** An SDK with in-memory exporters, and an instrumentation that reports to it. */
function setup() {
  current = sdk();
  const instrumentation = otel({
    tracerProvider: current.tracerProvider,
    meterProvider: current.meterProvider,
  });
  return { telemetry: current, instrumentation };
}

/** A charge function under `idempotent()`, each call's key its order id. */
function chargeWith(instrumentation: ReturnType<typeof otel>, run: (id: string) => Promise<unknown>) {
  return idempotent(async (order: { id: string; cents: number }) => run(order.id), {
    key: (order) => order.id,
    scope: 'charge',
    store: new MemoryStore(),
    instrumentation,
  });
}

describe('oncely/otel: one span per execution, its outcome and its store calls', () => {
  it('acquired: the span is a child of the caller, its store calls and the code it runs are its children', async () => {
    const { telemetry, instrumentation } = setup();
    const charge = chargeWith(instrumentation, async (id) =>
      telemetry.tracer.startActiveSpan('charge card', (span) => {
        span.end();
        return { paid: id };
      }),
    );
    const { parent } = await within(telemetry.tracer, 'POST /checkout', () =>
      charge({ id: 'order-secret-1', cents: 5 }),
    );
    const spans = telemetry.spans();
    const execution = only(spans, 'oncely fn:charge');
    expect(isChildOf(execution, parent)).toBe(true);
    expect(execution.kind).toBe(SpanKind.INTERNAL);
    expect(execution.attributes).toMatchObject({
      [ATTR.outcome]: 'acquired',
      [ATTR.scope]: 'fn:charge',
      [ATTR.attempt]: 1,
      [ATTR.takeover]: false,
      [ATTR.keyHash]: scopedKey('fn:charge', 'order-secret-1'),
    });
    expect(typeof execution.attributes[ATTR.fencingToken]).toBe('number');
    // The client's key is never an attribute value, only its hash.
    for (const span of spans)
      for (const value of Object.values(span.attributes))
        expect(String(value)).not.toContain('order-secret-1');
    for (const operation of ['begin', 'complete']) {
      const store = only(spans, `memory ${operation}`);
      expect(store.kind).toBe(SpanKind.INTERNAL);
      expect(isChildOf(store, execution)).toBe(true);
      expect(store.attributes).toMatchObject({
        [ATTR.storeOperation]: operation,
        [ATTR.storeName]: 'memory',
      });
    }
    expect(isChildOf(only(spans, 'charge card'), execution)).toBe(true);
    expect(execution.events.map((event) => event.name)).toEqual(['oncely.acquired', 'oncely.completed']);

    const metrics = await telemetry.metrics();
    const requests = metrics.get(METRIC.requests.name);
    expect(requests?.descriptor.unit).toBe('{request}');
    expect(total(requests, { [ATTR.outcome]: 'acquired', [ATTR.scope]: 'fn:charge' })).toBe(1);
    expect(recorded(metrics.get(METRIC.claimDuration.name), { [ATTR.outcome]: 'acquired' })).toBe(1);
    const store = metrics.get(METRIC.storeDuration.name);
    expect(store?.descriptor.unit).toBe('s');
    expect(recorded(store, { [ATTR.storeOperation]: 'begin', [ATTR.storeName]: 'memory' })).toBe(1);
    expect(recorded(store, { [ATTR.storeOperation]: 'complete' })).toBe(1);
  });

  it('replayed, mismatch and conflict: one span and one count each; only replays record a replay latency', async () => {
    const { telemetry, instrumentation } = setup();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const charge = chargeWith(instrumentation, async (id) => {
      if (id === 'slow') await held;
      return { paid: id };
    });
    await charge({ id: 'a', cents: 5 });
    await charge({ id: 'a', cents: 5 }); // replayed
    await charge({ id: 'a', cents: 6 }).catch((error) => {
      if (!isFingerprintMismatchError(error)) throw error;
    });
    const slow = charge({ id: 'slow', cents: 1 });
    await sleep(5);
    await expect(charge({ id: 'slow', cents: 1 })).rejects.toBeInstanceOf(InProgressError);
    release();
    await slow;

    const outcomes = named(telemetry.spans(), 'oncely fn:charge').map(
      (span) => span.attributes[ATTR.outcome],
    );
    expect(outcomes.sort()).toEqual(['acquired', 'acquired', 'conflict', 'mismatch', 'replayed']);
    for (const span of named(telemetry.spans(), 'oncely fn:charge'))
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    const metrics = await telemetry.metrics();
    const requests = metrics.get(METRIC.requests.name);
    for (const kind of ['replayed', 'mismatch', 'conflict'])
      expect(total(requests, { [ATTR.outcome]: kind }), kind).toBe(1);
    expect(recorded(metrics.get(METRIC.replayDuration.name))).toBe(1);
    expect(recorded(metrics.get(METRIC.replayDuration.name), { [ATTR.outcome]: 'replayed' })).toBe(1);
    expect(recorded(metrics.get(METRIC.claimDuration.name))).toBe(2);
  });

  it('released: code that throws lets the key go, and the span says why', async () => {
    const { telemetry, instrumentation } = setup();
    const charge = chargeWith(instrumentation, async () => {
      throw new Error('card declined');
    });
    await expect(charge({ id: 'b', cents: 5 })).rejects.toThrow('card declined');
    const execution = only(telemetry.spans(), 'oncely fn:charge');
    expect(execution.attributes).toMatchObject({ [ATTR.outcome]: 'released', [ATTR.releaseReason]: 'error' });
    expect(isChildOf(only(telemetry.spans(), 'memory release'), execution)).toBe(true);
    const metrics = await telemetry.metrics();
    expect(total(metrics.get(METRIC.requests.name), { [ATTR.outcome]: 'released' })).toBe(1);
  });

  it('lease lost: a claim whose renewals never come back ends as lease_lost, even when it is released after', async () => {
    const { telemetry, instrumentation } = setup();
    const store = faulty(new MemoryStore());
    store.hang.add('renew');
    const engine = new Engine({ store, leaseMs: 60, storeTimeoutMs: 100, instrumentation });
    const begun = await engine.begin({ key: 'k-lost', fingerprint: 'f', scope: 'job' });
    if (begun.kind !== 'acquired') throw new Error('expected a claim');
    await new Promise((resolve) => begun.claim.signal.addEventListener('abort', resolve));
    await begun.claim.release();
    const execution = only(telemetry.spans(), 'oncely job');
    expect(execution.attributes[ATTR.outcome]).toBe('lease_lost');
    expect(execution.status.code).toBe(SpanStatusCode.ERROR);
    expect(execution.events.map((event) => event.name)).toContain('oncely.leaseLost');
    // The hanging renewal is a store call of the execution: a child span that ends with the store timeout.
    await sleep(150);
    const renewal = only(telemetry.spans(), 'memory renew');
    expect(isChildOf(renewal, execution)).toBe(true);
    expect(renewal.status.code).toBe(SpanStatusCode.ERROR);
    expect(renewal.status.message).toMatch(/timed out/);
  });

  it('takeover and fenced: the stalled owner is fenced, the one that took over completes', async () => {
    const { telemetry, instrumentation } = setup();
    const store = faulty(new MemoryStore());
    store.hang.add('renew');
    const engine = new Engine({ store, leaseMs: 50, instrumentation });
    const first = await engine.begin({ key: 'k-take', fingerprint: 'f', scope: 'job' });
    if (first.kind !== 'acquired') throw new Error('expected a claim');
    await sleep(80);
    const second = await engine.begin({ key: 'k-take', fingerprint: 'f', scope: 'job' });
    if (second.kind !== 'acquired') throw new Error(`expected a takeover, got ${second.kind}`);
    await second.claim.complete(outcome('second'));
    await expect(first.claim.complete(outcome('first'))).rejects.toBeInstanceOf(LeaseLostError);

    const [stalled, taker] = named(telemetry.spans(), 'oncely job').sort(
      (a, b) => (a.attributes[ATTR.attempt] as number) - (b.attributes[ATTR.attempt] as number),
    );
    expect(taker?.attributes).toMatchObject({
      [ATTR.outcome]: 'takeover',
      [ATTR.attempt]: 2,
      [ATTR.takeover]: true,
    });
    expect(stalled?.attributes).toMatchObject({
      [ATTR.outcome]: 'fenced',
      [ATTR.fencedOperation]: 'complete',
    });
    expect(stalled?.status.code).toBe(SpanStatusCode.ERROR);
    const metrics = await telemetry.metrics();
    const requests = metrics.get(METRIC.requests.name);
    expect(total(requests, { [ATTR.outcome]: 'takeover', [ATTR.scope]: 'job' })).toBe(1);
    expect(total(requests, { [ATTR.outcome]: 'fenced', [ATTR.scope]: 'job' })).toBe(1);
  });

  it('store error: a failing begin ends the span in error, with the failed store call as its child', async () => {
    const { telemetry, instrumentation } = setup();
    const store = faulty(new MemoryStore());
    store.fail.add('begin');
    const engine = new Engine({ store, instrumentation, breaker: false });
    await expect(engine.begin({ key: 'k-down', fingerprint: 'f', scope: 'job' })).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    const execution = only(telemetry.spans(), 'oncely job');
    expect(execution.attributes).toMatchObject({
      [ATTR.outcome]: 'store_error',
      [SEMCONV.errorType]: 'StoreUnavailableError',
    });
    expect(execution.status.code).toBe(SpanStatusCode.ERROR);
    const call = only(telemetry.spans(), 'memory begin');
    expect(isChildOf(call, execution)).toBe(true);
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    const metrics = await telemetry.metrics();
    expect(total(metrics.get(METRIC.requests.name), { [ATTR.outcome]: 'store_error' })).toBe(1);
    expect(
      recorded(metrics.get(METRIC.storeDuration.name), {
        [ATTR.storeOperation]: 'begin',
        [SEMCONV.errorType]: 'StoreUnavailableError',
      }),
    ).toBe(1);
  });
});

describe('oncely/otel: cost and set-up', () => {
  it('starts one span per execution and no store span when the execution is not recorded (sampled out)', async () => {
    current = sdk({ sampler: new AlwaysOffSampler() });
    const real = current.tracerProvider;
    let started = 0;
    const counting: TracerProvider = {
      getTracer(name, version, options) {
        const tracer = real.getTracer(name, version, options);
        return {
          startSpan(...args: Parameters<typeof tracer.startSpan>) {
            started++;
            return tracer.startSpan(...args);
          },
          startActiveSpan: tracer.startActiveSpan.bind(tracer) as typeof tracer.startActiveSpan,
        };
      },
    };
    const charge = chargeWith(
      otel({ tracerProvider: counting, meterProvider: current.meterProvider }),
      async (id) => id,
    );
    await charge({ id: 'quiet', cents: 1 });
    await charge({ id: 'quiet', cents: 1 });
    expect(started).toBe(2);
    expect(current.spans()).toHaveLength(0);
    // Metrics do not depend on sampling.
    expect(total((await current.metrics()).get(METRIC.requests.name))).toBe(2);
  });

  it('with only the API (no SDK registered) everything runs and nothing is recorded', async () => {
    const charge = chargeWith(otel(), async (id) => ({ paid: id }));
    expect(await charge({ id: 'no-sdk', cents: 1 })).toEqual({ paid: 'no-sdk' });
    expect(await charge.execute({ id: 'no-sdk', cents: 1 })).toMatchObject({ replayed: true });
  });

  it('with only the API an execution is not instrumented at all, and a global SDK registered later is used at once', async () => {
    const { metrics, trace } = await import('@opentelemetry/api');
    const instrumentation = otel();
    const probes = instrumentation.engine(new MemoryStore());
    // Nothing could record: the engine runs the execution as an uninstrumented one (no span, no wrapped store
    // call, no event hook), which is what makes otel() free until an SDK is registered.
    expect(probes.start(scopedKey('s', 'a'), 'charge')).toBe(NO_EXECUTION);
    current = sdk();
    trace.setGlobalTracerProvider(current.tracerProvider);
    try {
      expect(probes.start(scopedKey('s', 'b'), 'charge')).not.toBe(NO_EXECUTION);
      trace.disable();
      expect(probes.start(scopedKey('s', 'c'), 'charge')).toBe(NO_EXECUTION);
      metrics.setGlobalMeterProvider(current.meterProvider);
      // A meter provider alone is reason enough (the metrics do not depend on tracing), and the no-op meter the
      // probes above looked at is not kept.
      const charge = chargeWith(instrumentation, async (id) => id);
      await charge({ id: 'metrics-only', cents: 1 });
      expect(total((await current.metrics()).get(METRIC.requests.name))).toBe(1);
    } finally {
      trace.disable();
      metrics.disable();
    }
  });

  it('looks the global meter provider up at the first measurement, not when otel() is called', async () => {
    const { metrics } = await import('@opentelemetry/api');
    const instrumentation = otel(); // before the SDK registers, as a module-level constant would be
    current = sdk();
    metrics.setGlobalMeterProvider(current.meterProvider);
    try {
      await chargeWith(instrumentation, async (id) => id)({ id: 'late-sdk', cents: 1 });
      expect(total((await current.metrics()).get(METRIC.requests.name))).toBe(1);
    } finally {
      metrics.disable();
    }
  });

  it('refuses malformed options at construction', () => {
    const store = new MemoryStore();
    expect(() => otel({ tracer: {} } as never)).toThrow(InvalidOptionsError);
    expect(() => otel({ meterProvider: {} } as never)).toThrow(InvalidOptionsError);
    expect(() => new Engine({ store, instrumentation: 42 as never })).toThrow(InvalidOptionsError);
    expect(() => new Engine({ store, instrumentation: { engine: 'yes' } as never })).toThrow(
      InvalidOptionsError,
    );
  });
});
