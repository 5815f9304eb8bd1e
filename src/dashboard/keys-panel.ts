/**
 * @module The keys and parked panels, from one survey of the store's inspector: counts by state, the rows of each
 * list, and the inbox's parked messages (completed records with the inbox's parked mark), within `scanLimit`.
 */
import type { RecordMark, RecordSummary } from '../core/inspection.js';
import { FINGERPRINT as INBOX_FINGERPRINT, PARKED_HEADER } from '../messaging/consumer.js';
import type { BoardSource } from './board-source.js';
import type { KeyRow, KeysPanel, ParkedPanel } from './model.js';

/** How an inbox marks a message it parked (see messaging/consumer.ts). */
const PARKED: RecordMark = { fingerprint: INBOX_FINGERPRINT, header: [PARKED_HEADER, 'parked'] };

export async function readKeys(
  source: BoardSource,
  listLimit: number,
  scanLimit: number,
): Promise<{ keys: KeysPanel; parked: ParkedPanel }> {
  const survey = await source.inspector.survey({ limit: listLimit, scanLimit, mark: PARKED });
  const { truncated, scanned } = survey;
  const parked = survey.marked ?? { count: 0, records: [] };
  return {
    keys: {
      counts: { ...survey.counts, truncated, scanned },
      inProgress: survey.lists.inProgress.map(rowOf),
      completed: survey.lists.completed.map(rowOf),
      released: survey.lists.released.map(rowOf),
    },
    parked: {
      count: parked.count,
      truncated,
      rows: parked.records.map((record) => ({
        key: record.key,
        attempt: record.attempt,
        parkedAt: record.completedAt ?? null,
        expiresAt: record.expiresAt,
      })),
    },
  };
}

/** A record as the page lists it (nulls where the store has nothing to say). */
export function rowOf(record: RecordSummary): KeyRow {
  return {
    key: record.key,
    ...(record.label === undefined ? {} : { label: record.label }),
    state: record.state,
    attempt: record.attempt,
    token: record.token,
    leaseLeftMs: record.leaseLeftMs ?? null,
    createdAt: record.createdAt,
    completedAt: record.completedAt ?? null,
    expiresAt: record.expiresAt,
    status: record.status ?? null,
    takenOver: record.takenOver ?? null,
  };
}
