/**
 * @module The CLI's exit codes, documented in docs/cli.md and `oncely help`. Scripts branch on them, so every failure
 * maps to one of these through the two error classes below; anything else is a bug (printed with its stack).
 */
export const EXIT = {
  ok: 0,
  /** The command ran and failed: a store unreachable or not migrated, a busy port, a key executed twice. */
  failed: 1,
  /** The call was wrong: unknown command or flag, a bad value, a malformed REDIS_URL / DATABASE_URL. */
  usage: 2,
} as const;

/** A mistake in how the CLI was called: printed as one line with a hint, exit code 2, no stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The command ran and found a problem (a key executed twice, a store down): exit code 1. */
export class CommandFailed extends Error {
  override name = 'CommandFailed';
}
