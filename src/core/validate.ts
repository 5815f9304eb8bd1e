/**
 * @module The option checks every factory uses (whole numbers within bounds, functions, known names), so a bad option
 * fails at construction with its name in the message, never per request.
 */
import { InvalidOptionsError } from './errors.js';

/** A whole number of milliseconds (or bytes, or a count) within bounds, or the default when undefined. */
export function wholeNumber(
  name: string,
  value: unknown,
  fallback: number,
  { min = 0, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionsError(
      `${name} must be a whole number from ${min} to ${max}, got ${String(value)}`,
    );
  }
  return value;
}

export function requireFunction(name: string, value: unknown): void {
  if (typeof value !== 'function') throw new InvalidOptionsError(`${name} must be a function`);
}

export function optionalFunction(name: string, value: unknown): void {
  if (value !== undefined) requireFunction(name, value);
}

/** Rejects option names the caller misspelled, which would otherwise be silently ignored. */
export function knownOptions(what: string, options: object, known: readonly string[]): void {
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) {
      throw new InvalidOptionsError(`${what}: unknown option "${name}" (known: ${known.join(', ')})`);
    }
  }
}
