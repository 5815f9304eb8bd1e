import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/** `node:util` parseArgs with strict checking, turning its errors into a usage error that names the command. */
export function parseOptions<T extends OptionSpec>(
  command: string,
  argv: readonly string[],
  options: T,
): ReturnType<typeof parseArgs<{ options: T; strict: true; allowPositionals: true }>> {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(`${command}: ${(error as Error).message} (see oncely help)`);
  }
}

/** A whole number option within bounds, with a clear message naming the flag. */
export function intOption(
  name: string,
  value: string | undefined,
  fallback: number,
  min = 1,
  max = 1_000_000,
): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return parsed;
}

export function choiceOption<C extends string>(
  name: string,
  value: string | undefined,
  choices: readonly C[],
  fallback: C,
): C {
  if (value === undefined) return fallback;
  if (!(choices as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got "${value}"`);
  }
  return value as C;
}
