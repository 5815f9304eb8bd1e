/**
 * @module The PostgreSQL store's inspector. A survey is two statements sent together (counts, and the rows of each
 * list), each a bounded walk down the expiry index: at most `scanLimit` live rows read, newest expiry first, never
 * a body. A record's view is one statement that returns the body's size, and its bytes only when asked.
 */
import type {
  RecordSummary,
  RecordView,
  RecordViewOptions,
  StoreInspector,
  Survey,
  SurveyOptions,
} from '../../core/inspection.js';
import { viewOf } from '../../core/inspection-records.js';
import type { KeyState } from '../../core/store.js';
import { checkSurvey } from '../../core/survey-tally.js';
import { type Row, recordOf } from './rows.js';
import type { PostgresRuntime } from './runtime.js';

const STATES: readonly KeyState[] = ['inProgress', 'completed', 'released'];

export class PostgresInspector implements StoreInspector {
  readonly #runtime: PostgresRuntime;

  constructor(runtime: PostgresRuntime) {
    this.#runtime = runtime;
  }

  async survey(options: SurveyOptions): Promise<Survey> {
    checkSurvey(options);
    const { limit, scanLimit, mark } = options;
    const now = this.#runtime.now();
    const prefix = options.keyPrefix ?? null;
    const markValues = mark === undefined ? [null, null] : [mark.fingerprint, JSON.stringify([mark.header])];
    const { surveyCounts, surveyLists } = this.#runtime.statements;
    const [[counted], listed] = await Promise.all([
      this.#runtime.rows('survey', surveyCounts, [now, scanLimit, prefix, ...markValues]),
      this.#runtime.rows('survey', surveyLists, [
        now,
        scanLimit,
        limit,
        prefix,
        ...markValues,
        (options.states ?? STATES).join(','),
      ]),
    ]);
    const count = (column: string) => Number(counted?.[column] ?? 0);
    const lists: Record<KeyState | 'marked', RecordSummary[]> = {
      inProgress: [],
      completed: [],
      released: [],
      marked: [],
    };
    for (const row of listed) lists[row.list as KeyState | 'marked'].push(summaryOf(row));
    const walked = count('walked');
    return {
      counts: {
        records: count('records'),
        inProgress: count('in_progress'),
        completed: count('completed'),
        released: count('released'),
        leaseExpired: count('lease_expired'),
      },
      lists: { inProgress: lists.inProgress, completed: lists.completed, released: lists.released },
      ...(mark === undefined ? {} : { marked: { count: count('marked'), records: lists.marked } }),
      truncated: walked > scanLimit,
      scanned: Math.min(walked, scanLimit),
    };
  }

  async record(key: string, options: RecordViewOptions = {}): Promise<RecordView | undefined> {
    const values = [key, this.#runtime.now(), options.body === true];
    const [row] = await this.#runtime.rows('inspect', this.#runtime.statements.inspectRecord, values);
    if (row === undefined) return undefined;
    // recordOf checks the row as `get` does; the body it carries is empty unless asked for.
    const view = viewOf(recordOf(row), Number(row.now_ms), options);
    const takenOver = row.taken_over === true;
    if (view.outcome === undefined) return { ...view, takenOver };
    return { ...view, takenOver, outcome: { ...view.outcome, bodyBytes: Number(row.body_bytes ?? 0) } };
  }
}

function summaryOf(row: Row): RecordSummary {
  const state = row.state as KeyState;
  const optional = (value: unknown) => (value === null || value === undefined ? undefined : Number(value));
  const leaseUntil = Number(row.lease_until_ms);
  return {
    key: String(row.key),
    ...(row.label == null ? {} : { label: String(row.label) }),
    state,
    fingerprint: String(row.fingerprint),
    token: Number(row.token),
    attempt: Number(row.attempt),
    leaseUntil,
    leaseLeftMs: state === 'inProgress' ? leaseUntil - Number(row.now_ms) : undefined,
    createdAt: Number(row.created_at_ms),
    completedAt: state === 'completed' ? optional(row.completed_at_ms) : undefined,
    expiresAt: Number(row.expires_at_ms),
    status: state === 'completed' ? optional(row.status) : undefined,
    takenOver: row.taken_over === true,
  };
}
