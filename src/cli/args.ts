/**
 * @module Argument parsing for the `oncely` commands: `node:util`'s parseArgs with the rules each command states
 * (positionals, options), every mistake a usage error that names it.
 */
import { parseArgs } from 'node:util';
import { UsageError } from './errors.js';

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

export interface ParseRules {
  /** Names of the positional arguments the command takes, in order (`outbox` takes its action). Default none. */
  readonly positionals?: readonly string[];
  /** A sentence to add when one of these flags is given but unknown (say where the option lives instead). */
  readonly unknownHints?: Readonly<Record<string, string>>;
}

/**
 * `node:util` parseArgs with strict checking. Its own errors name the flag but speak of positionals and `--`
 * escapes, which confuses more than it helps; each mistake is found here first and reported as a usage error
 * that names the flag and lists the command's options.
 */
export function parseOptions<T extends OptionSpec>(
  command: string,
  argv: readonly string[],
  options: T,
  rules: ParseRules = {},
): ReturnType<typeof parseArgs<{ options: T; strict: true; allowPositionals: true }>> {
  checkTokens(command, argv, options, rules);
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (error) {
    // checkTokens covers every error parseArgs raises today; this keeps a future one a usage error too.
    throw new UsageError(`${command}: ${(error as Error).message.split('\n')[0]} ${seeHelp(command)}`);
  }
}

function checkTokens(command: string, argv: readonly string[], options: OptionSpec, rules: ParseRules): void {
  const { tokens } = parseArgs({
    args: [...argv],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const takes = rules.positionals ?? [];
  let positionals = 0;
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (positionals++ >= takes.length) {
        throw new UsageError(`${command}: unexpected argument "${token.value}" ${seeHelp(command)}`);
      }
      continue;
    }
    if (token.kind !== 'option') continue;
    const spec = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (spec === undefined) {
      const hint = rules.unknownHints?.[token.name];
      throw new UsageError(
        `${command}: unknown option ${token.rawName}${hint ? ` (${hint})` : ''}; ${command} takes ${optionList(options)}`,
      );
    }
    if (spec.type === 'boolean' && token.value !== undefined) {
      throw new UsageError(`${command}: ${token.rawName} takes no value, got "${token.value}"`);
    }
    if (spec.type === 'string') {
      if (token.value === undefined) throw new UsageError(`${command}: ${token.rawName} needs a value`);
      // `--keys --serve` or `--keys -1`: without `=` a value that looks like a flag is most likely a forgotten value.
      if (!token.inlineValue && token.value.startsWith('-')) {
        throw new UsageError(
          `${command}: ${token.rawName} needs a value, got the flag "${token.value}" (write ${token.rawName}=${token.value} if that is the value)`,
        );
      }
    }
  }
}

function optionList(options: OptionSpec): string {
  return [...Object.keys(options), 'help'].map((name) => `--${name}`).join(', ');
}

const seeHelp = (command: string) => `(see oncely help ${command})`;

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
  if (value.trim() === '' || !Number.isInteger(parsed) || parsed < min || parsed > max) {
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
