/** A mistake in how the CLI was called: printed as one line with a hint, exit code 2, no stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The command ran and found a problem (a key executed twice, a store down): exit code 1. */
export class CommandFailed extends Error {
  override name = 'CommandFailed';
}
