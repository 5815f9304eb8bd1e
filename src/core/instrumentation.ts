/**
 * @module The instrumentation hook (`oncely/otel` implements it): spans and metrics around executions and store calls,
 * without the core importing OpenTelemetry.
 */
import type { Emit } from './emit.js';
import { InvalidOptionsError } from './errors.js';
import type { OncelyEvent } from './events.js';
import type { Store } from './store.js';

/**
 * Tracing and metrics as a hook: `oncely/otel` implements it with OpenTelemetry, and the engine calls it without
 * knowing which library is behind it, so the core never imports `@opentelemetry/api`. The events hook alone
 * could not carry this: a span must start before the `begin` it parents, in the caller's async context, and a
 * store call's span must wrap the call itself.
 */
export interface Instrumentation {
  /** Called once by each engine, with its store. Undefined: this engine is not instrumented. */
  engine?(store: Store): EngineProbe | undefined;
}

/** Starts one probe per execution: a call of `engine.begin`, whatever it finds, up to its claim's settlement. */
export interface EngineProbe {
  /**
   * Called at `engine.begin`, in the caller's async context (so a tracer finds the caller's span there).
   * `key` is the hashed storage key, `scope` the low-cardinality name the caller gave (a route, a function).
   */
  start(key: string, scope: string | undefined): ExecutionProbe;
}

/** The store operations an execution makes; `commit` and `rollback` settle a transactional claim. */
export type StoreOperation = 'begin' | 'complete' | 'release' | 'renew' | 'get' | 'commit' | 'rollback';

/** What the engine reports of one execution. Every method must be cheap and must not throw. */
export interface ExecutionProbe {
  /** Runs one store call of this execution (already bounded by the engine's timeout and circuit breaker). */
  store<T>(operation: StoreOperation, call: () => Promise<T>): Promise<T>;
  /** Runs the caller's code (`execute`'s `run`) as part of this execution, so its own spans nest under it. */
  run<T>(code: () => T): T;
  /** The events of this execution, as `onEvent` receives them. */
  event(event: OncelyEvent): void;
  /** The execution is over: answered without a claim, or its claim settled. `error`: `begin` or `complete` failed. */
  end(error?: unknown): void;
}

/** The probe of an engine without instrumentation: calls straight through. */
export const NO_EXECUTION: ExecutionProbe = {
  store: (_operation, call) => call(),
  run: (code) => code(),
  event: () => {},
  end: () => {},
};

/** The engine's emitter, plus the execution's probe when there is one (no extra call otherwise). */
export function reporter(emit: Emit, probe: ExecutionProbe): Emit {
  if (probe === NO_EXECUTION) return emit;
  return (event, scope) => {
    emit(event, scope);
    probe.event(event);
  };
}

/** Validates the option once, at construction. */
export function checkInstrumentation(value: unknown): Instrumentation | undefined {
  if (value === undefined) return undefined;
  const engine = (value as { engine?: unknown } | null)?.engine;
  if (value === null || typeof value !== 'object' || (engine !== undefined && typeof engine !== 'function'))
    throw new InvalidOptionsError(
      "instrumentation must be an object such as otel() from 'oncely/otel' (with an optional engine(store) method)",
    );
  return value as Instrumentation;
}
