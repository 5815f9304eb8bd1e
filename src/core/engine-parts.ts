/**
 * @module What an engine lends the claims it hands out: the guarded store, the envelope rules and the emitter.
 */
import type { Emit } from './emit.js';
import type { StoreGuard } from './guarded-store.js';
import type { EnvelopeOptions } from './record.js';

/**
 * What an engine lends the claims it hands out: the guarded store, the envelope rules and the emitter (`onEvent`
 * and the diagnostics channels).
 */
export interface EngineParts {
  readonly guard: StoreGuard;
  readonly envelope: EnvelopeOptions;
  readonly emit: Emit;
}
