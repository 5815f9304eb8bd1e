/**
 * @module The `topics` option shared by the relay and the maintenance functions, which lets applications share one
 * outbox table: checked once, and an empty list refused rather than guessed at.
 */
import { InvalidOptionsError } from '../../core/errors.js';

/** The `topics` option of the relay and of the maintenance functions: which topics of the table are theirs. */
export interface TopicsOptions {
  /**
   * Only rows of these topics (exact names). Default: every topic. Set it when applications share one outbox
   * table, so each relay publishes, purges and counts its own events only (docs/messaging/relay.md#topics).
   */
  readonly topics?: readonly string[];
}

/**
 * Checks a `topics` option once, at construction: undefined (every topic) or a non-empty array of non-empty
 * strings, returned without duplicates. An empty list is refused rather than read as "none" or "all": both
 * readings are plausible, and guessing wrong would publish another application's events or stall one's own.
 */
export function topicList(what: string, value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidOptionsError(
      `${what}: topics must be a non-empty array of topic names (omit it for all)`,
    );
  }
  for (const topic of value) {
    if (typeof topic !== 'string' || topic === '')
      throw new InvalidOptionsError(
        `${what}: topics must hold non-empty strings, got ${JSON.stringify(topic)}`,
      );
  }
  return [...new Set(value as string[])];
}
