import type { KeyRow, KeyStateName, KeysPanel, ParkedPanel } from './model.js';

/** What a store read of one record gives the dashboard: the header fields, never the body. */
export interface RecordView {
  readonly key: string;
  readonly state: KeyStateName;
  readonly attempt: number;
  readonly token: number;
  readonly leaseUntil: number;
  readonly createdAt: number;
  readonly completedAt: number | null;
  readonly expiresAt: number;
  readonly status: number | null;
  readonly takenOver: boolean | null;
  /** Completed with an inbox's parked mark. */
  readonly parked: boolean;
}

/** Counts and the rows worth listing, gathered record by record (Redis, where no query can sort for us). */
export interface KeyTally {
  readonly counts: {
    records: number;
    inProgress: number;
    completed: number;
    released: number;
    leaseExpired: number;
  };
  truncated: boolean;
  /** Keys the SCAN walked (the COUNT it asked for), records or not. */
  scanned: number;
  readonly listLimit: number;
  readonly inProgress: KeyRow[];
  readonly completed: KeyRow[];
  readonly released: KeyRow[];
  readonly parked: KeyRow[];
}

export function newTally(listLimit: number): KeyTally {
  return {
    counts: { records: 0, inProgress: 0, completed: 0, released: 0, leaseExpired: 0 },
    truncated: false,
    scanned: 0,
    listLimit,
    inProgress: [],
    completed: [],
    released: [],
    parked: [],
  };
}

/** Adds one record as of `now` (the store's clock). Records past their logical end do not exist any more. */
export function tallyRecord(tally: KeyTally, view: RecordView, now: number): void {
  if (view.expiresAt <= now) return;
  const row = rowOf(view, now);
  tally.counts.records++;
  tally.counts[view.state]++;
  if (view.state === 'inProgress' && view.leaseUntil <= now) tally.counts.leaseExpired++;
  tally[view.state].push(row);
  if (view.parked) tally.parked.push(row);
}

export function rowOf(view: RecordView, now: number): KeyRow {
  return {
    key: view.key,
    state: view.state,
    attempt: view.attempt,
    token: view.token,
    leaseLeftMs: view.state === 'inProgress' ? view.leaseUntil - now : null,
    createdAt: view.createdAt,
    completedAt: view.completedAt,
    expiresAt: view.expiresAt,
    status: view.status,
    takenOver: view.takenOver,
  };
}

/** The panels from a finished tally: each list sorted as the page shows it and cut to `listLimit`. */
export function panelsOf(tally: KeyTally): { keys: KeysPanel; parked: ParkedPanel } {
  const top = (rows: KeyRow[], by: (row: KeyRow) => number) =>
    rows.sort((a, b) => by(a) - by(b)).slice(0, tally.listLimit);
  return {
    keys: {
      counts: { ...tally.counts, truncated: tally.truncated, scanned: tally.scanned },
      inProgress: top(tally.inProgress, (row) => row.leaseLeftMs ?? 0),
      completed: top(tally.completed, (row) => -(row.completedAt ?? 0)),
      released: top(tally.released, (row) => -row.createdAt),
    },
    parked: {
      count: tally.parked.length,
      truncated: tally.truncated,
      rows: top(tally.parked, (row) => -(row.completedAt ?? 0)).map((row) => ({
        key: row.key,
        attempt: row.attempt,
        parkedAt: row.completedAt,
        expiresAt: row.expiresAt,
      })),
    },
  };
}
