/**
 * @module What an `OutboxRelay` reports through `onEvent` (batches published, failures retried or dead-lettered,
 * rows fenced or handed back, a broker outage, purges, errors and warnings), for logs and alerts.
 */
/** What a relay reports through `onEvent`. Ids are outbox ids (as text). */
export type RelayEvent =
  /** A batch went through. `maxAgeMs`: time from the oldest row's insert to its confirmation (relay clock). */
  | { readonly type: 'published'; readonly count: number; readonly maxAgeMs: number }
  /** A message failed and will be retried after `retryInMs` (or was dead-lettered: `dead`). */
  | {
      readonly type: 'failed';
      readonly id: string;
      readonly topic: string;
      readonly attempt: number;
      readonly retryInMs: number;
      readonly dead: boolean;
      readonly error: unknown;
    }
  /** Rows another relay took over (this relay's lease ran out): their results were not written. */
  | { readonly type: 'fenced'; readonly count: number }
  /** Rows handed back unpublished (shutdown), without counting an attempt. */
  | { readonly type: 'returned'; readonly count: number }
  /** Every publish of a batch failed: the broker looks down, so the relay pauses before claiming again. */
  | { readonly type: 'outage'; readonly pauseMs: number; readonly error: unknown }
  /** Published rows removed by the purge. */
  | { readonly type: 'purged'; readonly count: number }
  /** A database or notification error; the relay keeps going. */
  | { readonly type: 'error'; readonly operation: string; readonly error: unknown }
  /** A misconfiguration that does not stop the relay (e.g. a deduplication window shorter than the retry horizon). */
  | { readonly type: 'warning'; readonly message: string };
