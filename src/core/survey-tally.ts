/**
 * @module The counting and ordering of a survey, for stores that read their records one by one (the memory
 * store, Redis' SCAN, a DynamoDB scan): the store walks within `scanLimit`, hands each record here, and gets the
 * `Survey` back. Each list keeps only its best `limit` records as it goes, so memory stays bounded by `limit`
 * however far the walk goes.
 */
import { InvalidOptionsError } from './errors.js';
import type { RecordSummary, Survey, SurveyOptions } from './inspection.js';
import type { KeyState } from './store.js';

type Order = (a: RecordSummary, b: RecordSummary) => number;

/** The order each list is shown in: the longest-stuck, the latest completed, the newest released first. */
const ORDERS: Readonly<Record<KeyState | 'marked', Order>> = {
  inProgress: (a, b) => a.leaseUntil - b.leaseUntil,
  completed: (a, b) => (b.completedAt ?? 0) - (a.completedAt ?? 0),
  released: (a, b) => b.createdAt - a.createdAt,
  marked: (a, b) => (b.completedAt ?? 0) - (a.completedAt ?? 0),
};

const STATES: readonly KeyState[] = ['inProgress', 'completed', 'released'];

/** Refuses a survey without both bounds (a whole number ≥ 1 each) or with an unknown state: checked by every store. */
export function checkSurvey(options: SurveyOptions): void {
  for (const name of ['limit', 'scanLimit'] as const) {
    const value = options?.[name];
    if (!Number.isSafeInteger(value) || value < 1)
      throw new InvalidOptionsError(
        `survey: ${name} must be a whole number of at least 1, got ${String(value)}`,
      );
  }
  if (options.states !== undefined && !options.states.every((state) => STATES.includes(state)))
    throw new InvalidOptionsError(`survey: states are ${STATES.join(', ')}`);
}

export class SurveyTally {
  readonly #options: SurveyOptions;
  readonly #listed: ReadonlySet<KeyState>;
  readonly #counts = { records: 0, inProgress: 0, completed: 0, released: 0, leaseExpired: 0 };
  readonly #lists: Record<KeyState | 'marked', RecordSummary[]> = {
    inProgress: [],
    completed: [],
    released: [],
    marked: [],
  };
  #marked = 0;
  #scanned = 0;
  #truncated = false;

  constructor(options: SurveyOptions) {
    checkSurvey(options);
    this.#options = options;
    this.#listed = new Set(options.states ?? STATES);
  }

  /** Work the walk may still do before it reaches `scanLimit`. */
  get left(): number {
    return Math.max(0, this.#options.scanLimit - this.#scanned);
  }

  /** Counts work done (keys a SCAN call asked for, entries visited). */
  spend(units: number): void {
    this.#scanned += units;
  }

  /** The walk stopped at the bound with records possibly left. */
  truncate(): void {
    this.#truncated = true;
  }

  /** One record as of `now` (the store's clock); one past its logical end is not a record any more. */
  add(record: RecordSummary, now: number, marked = false): void {
    if (record.expiresAt <= now) return;
    const { keyPrefix } = this.#options;
    if (keyPrefix !== undefined && !record.key.startsWith(keyPrefix)) return;
    this.#counts.records++;
    this.#counts[record.state]++;
    if (record.state === 'inProgress' && record.leaseUntil <= now) this.#counts.leaseExpired++;
    if (this.#listed.has(record.state)) this.#keep(record.state, record);
    if (marked) {
      this.#marked++;
      this.#keep('marked', record);
    }
  }

  result(): Survey {
    return {
      counts: { ...this.#counts },
      lists: {
        inProgress: this.#top('inProgress'),
        completed: this.#top('completed'),
        released: this.#top('released'),
      },
      ...(this.#options.mark === undefined
        ? {}
        : { marked: { count: this.#marked, records: this.#top('marked') } }),
      truncated: this.#truncated,
      // As counted, never clamped: a walk that overran its bound shows it (conformance checks scanned ≤ scanLimit).
      scanned: this.#scanned,
    };
  }

  #keep(list: KeyState | 'marked', record: RecordSummary): void {
    const rows = this.#lists[list];
    rows.push(record);
    // Sorting once the list doubles keeps the cost per record constant and the memory at 2 × limit.
    if (rows.length >= 2 * this.#options.limit) this.#lists[list] = this.#top(list);
  }

  #top(list: KeyState | 'marked'): RecordSummary[] {
    return this.#lists[list].sort(ORDERS[list]).slice(0, this.#options.limit);
  }
}
