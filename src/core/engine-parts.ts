import type { Emit } from './emit.js';
import type { StoreGuard } from './guarded-store.js';
import { type EnvelopeOptions, type Outcome, sealInline, sealOutcome } from './record.js';
import type { StoredOutcome } from './store.js';

/**
 * What an engine lends the claims it hands out: the guarded store, the envelope rules and the emitter (`onEvent`
 * and the diagnostics channels).
 */
export interface EngineParts {
  readonly guard: StoreGuard;
  readonly envelope: EnvelopeOptions;
  readonly emit: Emit;
}

/** The outcome as the store keeps it; a promise only when its body goes to the blob store. */
export function seal(
  parts: EngineParts,
  key: string,
  outcome: Outcome,
): StoredOutcome | Promise<StoredOutcome> {
  return sealInline(outcome, parts.envelope) ?? sealOutcome(key, outcome, parts.envelope);
}
