import { FINGERPRINT as INBOX_FINGERPRINT, PARKED_HEADER } from '../messaging/consumer.js';
import { storeTypes } from '../stores/postgres/rows.js';
import type { KeyRow, KeyStateName, ParkedRow } from './model.js';
import type { ResolvedSource } from './source.js';
import { dashboardSql } from './sql.js';

type PostgresSource = Extract<ResolvedSource, { kind: 'postgres' }>;
type Row = Readonly<Record<string, unknown>>;

/** How an inbox's parked mark is stored in the headers column (see messaging/consumer.ts). */
const PARKED_HEADERS = JSON.stringify([[PARKED_HEADER, 'parked']]);

export interface PostgresKeys {
  readonly counts: {
    readonly records: number;
    readonly inProgress: number;
    readonly completed: number;
    readonly released: number;
    readonly leaseExpired: number;
    readonly parked: number;
  };
  readonly lists: Readonly<Record<KeyStateName, KeyRow[]>>;
  readonly parked: ParkedRow[];
}

/** Counts and lists in two statements (a full scan each: for operators), by the server's clock, never a body. */
export async function readPostgresKeys(source: PostgresSource, listLimit: number): Promise<PostgresKeys> {
  const query = (text: string, values: unknown[]) =>
    source.pool.query<Row>({ text, values, types: storeTypes });
  const [counted, listed] = await Promise.all([
    query(dashboardSql.keysCounts(source.table), [INBOX_FINGERPRINT, PARKED_HEADERS]),
    query(dashboardSql.keysList(source.table), [listLimit, INBOX_FINGERPRINT, PARKED_HEADERS]),
  ]);
  const c = counted.rows[0] ?? {};
  const lists: Record<KeyStateName, KeyRow[]> = { inProgress: [], completed: [], released: [] };
  const parked: ParkedRow[] = [];
  for (const row of listed.rows) {
    const keyRow = rowOf(row);
    if (row.list === 'parked') {
      parked.push({
        key: keyRow.key,
        attempt: keyRow.attempt,
        parkedAt: keyRow.completedAt,
        expiresAt: keyRow.expiresAt,
      });
    } else lists[keyRow.state].push(keyRow);
  }
  return {
    counts: {
      records: Number(c.records ?? 0),
      inProgress: Number(c.in_progress ?? 0),
      completed: Number(c.completed ?? 0),
      released: Number(c.released ?? 0),
      leaseExpired: Number(c.lease_expired ?? 0),
      parked: Number(c.parked ?? 0),
    },
    lists,
    parked,
  };
}

function rowOf(row: Row): KeyRow {
  const state = row.state as KeyStateName;
  const now = Number(row.now_ms);
  const nullable = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return {
    key: String(row.key),
    state,
    attempt: Number(row.attempt),
    token: Number(row.token),
    leaseLeftMs: state === 'inProgress' ? Number(row.lease_until_ms) - now : null,
    createdAt: Number(row.created_at_ms),
    completedAt: nullable(row.completed_at_ms),
    expiresAt: Number(row.expires_at_ms),
    status: state === 'completed' ? nullable(row.status) : null,
    takenOver: row.taken_over === true,
  };
}
