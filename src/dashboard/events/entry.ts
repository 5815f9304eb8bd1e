/**
 * @module The dashboard's event log, its entries: which events are kept one by one (the notable ones), how one is
 * written (no request data), the 10-second buckets of the rate counts, and the batch one flush writes.
 */
import type { OncelyEvent } from '../../core/events.js';

/** Every bucket of the rate counts is this long; the page's charts draw one bar per bucket. */
export const BUCKET_MS = 10_000;

/** The events worth an operator's look one by one; every type (these included) is also counted per bucket. */
export const NOTABLE_TYPES = ['takeover', 'fenced', 'leaseLost', 'storeError'] as const;
const NOTABLE: ReadonlySet<string> = new Set(NOTABLE_TYPES);

/** A notable event as the log stores it: no request data, only the hashed storage key and a short reason. */
export interface LoggedEvent {
  readonly at: number;
  readonly type: string;
  readonly key: string | null;
  readonly detail: string;
}

/** What one flush writes. */
export interface EventBatch {
  readonly at: number;
  readonly events: readonly LoggedEvent[];
  /** bucket start → event type → count. */
  readonly counts: ReadonlyMap<number, ReadonlyMap<string, number>>;
  readonly keep: number;
  readonly countsRetentionMs: number;
}

const MAX_DETAIL = 300;

export function bucketOf(at: number): number {
  return at - (at % BUCKET_MS);
}

/** The log entry of a notable event, or undefined for the ones only counted. */
export function loggedEvent(event: OncelyEvent, at: number): LoggedEvent | undefined {
  if (!NOTABLE.has(event.type)) return undefined;
  const key = 'key' in event ? event.key : null;
  return { at, type: event.type, key, detail: detailOf(event).slice(0, MAX_DETAIL) };
}

function detailOf(event: OncelyEvent): string {
  switch (event.type) {
    case 'takeover':
      return `attempt ${event.attempt} (token ${event.token}) took over: the previous owner's lease ran out`;
    case 'fenced':
      return `${event.operation} with token ${event.token} refused: the key has a newer claim`;
    case 'leaseLost':
      return `the claim with token ${event.token} lost its lease while running`;
    case 'storeError': {
      const error = event.error;
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return `${event.operation}: ${message}`;
    }
    default:
      return event.type;
  }
}
