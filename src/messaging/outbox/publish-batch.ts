/**
 * @module One claimed batch handed to the publisher: rows as messages, publishes run with bounded concurrency and a
 * timeout each, and an outcome for every row, so none is left undecided when the batch settles.
 */
import type { PublishOutcome, RelayProbe } from '../instrumentation.js';
import type { OutboxMessage, Publisher } from '../publisher.js';
import type { ClaimedRow } from './backend.js';

/** What became of one claimed row. `unsent`: never handed over (shutdown, or the lease too close to its end). */
export type RowOutcome = PublishOutcome;

export interface BatchSettings {
  readonly publisher: Publisher;
  readonly publishTimeoutMs: number;
  /** Publishes in flight at once. The rows of a batch all have different keys, so any order among them is fine. */
  readonly concurrency: number;
  readonly idPrefix: string;
  /** No publish starts after this time (epoch ms): it could outlive the lease and race a relay that took over. */
  readonly startDeadline: number;
  /** Aborted when the relay gives up on the batch (shutdown timeout). */
  readonly signal: AbortSignal;
  readonly probe: RelayProbe | undefined;
}

export class PublishTimeoutError extends Error {
  override name = 'PublishTimeoutError' as const;
  constructor(timeoutMs: number) {
    super(`the broker did not confirm within ${timeoutMs} ms`);
  }
}

export function toMessage(row: ClaimedRow, idPrefix: string): OutboxMessage {
  return {
    id: `${idPrefix}${row.id}`,
    topic: row.topic,
    key: row.key,
    payload: row.payload,
    contentType: row.content_type,
    headers: row.headers,
    attempt: row.attempts,
    createdAt: row.created_at,
  };
}

/** Publishes a claimed batch with bounded concurrency; every row gets an outcome, none is left undecided. */
export async function publishBatch(
  rows: readonly ClaimedRow[],
  settings: BatchSettings,
): Promise<RowOutcome[]> {
  const outcomes: RowOutcome[] = rows.map(() => ({ kind: 'unsent' }));
  // One listener for the whole batch (not one per publish): batches are hundreds of rows.
  const { signal } = settings;
  let onAbort = () => {};
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < rows.length; index = next++) {
      if (signal.aborted || Date.now() >= settings.startDeadline) continue;
      const message = toMessage(rows[index]!, settings.idPrefix);
      const { probe } = settings;
      outcomes[index] = await (probe === undefined
        ? publishOne(message, settings, aborted)
        : probe.publish(message, () => publishOne(message, settings, aborted)));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, rows.length) }, worker));
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  return outcomes;
}

async function publishOne(
  message: OutboxMessage,
  settings: BatchSettings,
  aborted: Promise<'aborted'>,
): Promise<RowOutcome> {
  const { publisher, publishTimeoutMs } = settings;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), publishTimeoutMs);
  });
  const publishing = Promise.resolve().then(() => publisher.publish(message, controller.signal));
  try {
    const settled = await Promise.race([publishing.then(() => 'published' as const), timedOut, aborted]);
    if (settled === 'published') return { kind: 'published' };
    // The outcome is decided (timed out or aborted) and returned below; the abandoned publish may still reject
    // later, with nobody left to tell.
    publishing.catch(() => {});
    if (settled === 'timeout') {
      const error = new PublishTimeoutError(publishTimeoutMs);
      controller.abort(error);
      return { kind: 'failed', error };
    }
    controller.abort(settings.signal.reason);
    return { kind: 'unsent' };
  } catch (error) {
    return { kind: 'failed', error };
  } finally {
    clearTimeout(timer);
  }
}
