/**
 * @module Inspection views made from a whole `KeyRecord`: for stores whose read hands back the record (the memory
 * store, a Redis record of an older layout, a store that has nothing cheaper). `now` is the store's clock.
 */
import type { RecordMark, RecordSummary, RecordView, RecordViewOptions } from './inspection.js';
import type { KeyRecord, StoredOutcome } from './store.js';

export function summaryOf(record: KeyRecord, now: number): RecordSummary {
  const { label } = record;
  return {
    key: record.key,
    ...(label === undefined ? {} : { label }),
    state: record.state,
    fingerprint: record.fingerprint,
    token: record.token,
    attempt: record.attempt,
    leaseUntil: record.leaseUntil,
    leaseLeftMs: record.state === 'inProgress' ? record.leaseUntil - now : undefined,
    createdAt: record.createdAt,
    completedAt: record.completedAt,
    expiresAt: record.expiresAt,
    status: record.outcome?.status,
    takenOver: undefined,
  };
}

export function viewOf(record: KeyRecord, now: number, options: RecordViewOptions = {}): RecordView {
  return { ...summaryOf(record, now), outcome: outcomeViewOf(record.outcome, options) };
}

function outcomeViewOf(outcome: StoredOutcome | undefined, options: RecordViewOptions) {
  if (outcome === undefined) return undefined;
  const { status, headers, body, encoding, storage } = outcome;
  return {
    status,
    headers: headers.map(([name, value]) => [name, value] as const),
    bodyBytes: body.byteLength,
    encoding,
    storage,
    ...(options.body === true ? { body } : {}),
  };
}

/** Completed with the mark's fingerprint and an outcome of exactly the mark's header and no body. */
export function isMarked(
  mark: RecordMark | undefined,
  state: KeyRecord['state'],
  fingerprint: string,
  outcome: Pick<StoredOutcome, 'headers'> & { readonly bodyBytes: number },
): boolean {
  if (mark === undefined || state !== 'completed' || fingerprint !== mark.fingerprint) return false;
  const [only, ...rest] = outcome.headers;
  return (
    rest.length === 0 &&
    only !== undefined &&
    only[0] === mark.header[0] &&
    only[1] === mark.header[1] &&
    outcome.bodyBytes === 0
  );
}
