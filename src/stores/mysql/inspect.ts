/**
 * @module The MySQL store's inspector. A survey is one statement: a bounded walk down the expiry index (at most
 * `scanLimit` live rows read, newest expiry first, never a body), counted and ordered by `SurveyTally`. A record's
 * view is one statement that returns the body's size, and its bytes only when asked.
 */

import type {
  RecordSummary,
  RecordView,
  RecordViewOptions,
  StoreInspector,
  Survey,
  SurveyOptions,
} from '../../core/inspection.js';
import { isMarked, viewOf } from '../../core/inspection-records.js';
import { SurveyTally } from '../../core/survey-tally.js';
import type { Row } from './driver.js';
import { headersOf, keyBytes, numberOf, optionalNumber, recordOf, stateOf, textOf } from './rows.js';
import type { MySqlRuntime } from './runtime.js';

export class MySqlInspector implements StoreInspector {
  readonly #runtime: MySqlRuntime;

  constructor(runtime: MySqlRuntime) {
    this.#runtime = runtime;
  }

  async survey(options: SurveyOptions): Promise<Survey> {
    const tally = new SurveyTally(options);
    const values = { now: this.#runtime.now(), walk: options.scanLimit + 1 };
    const { rows } = await this.#runtime.run('survey', this.#runtime.statements.survey, values);
    for (const row of rows) {
      if (tally.left === 0) {
        // The one row past the bound only says there was more.
        tally.truncate();
        break;
      }
      tally.spend(1);
      const summary = summaryOf(row);
      const marked =
        row.mark_headers != null &&
        isMarked(options.mark, summary.state, summary.fingerprint, {
          headers: headersOf(row.mark_headers),
          bodyBytes: 0,
        });
      tally.add(summary, numberOf(row.now_ms, 'now_ms'), marked);
    }
    return tally.result();
  }

  async record(key: string, options: RecordViewOptions = {}): Promise<RecordView | undefined> {
    const values = { key: keyBytes(key), now: this.#runtime.now(), body: options.body === true ? 1 : 0 };
    const { rows } = await this.#runtime.run('inspect', this.#runtime.statements.inspectRecord, values);
    const [row] = rows;
    if (row === undefined) return undefined;
    // recordOf checks the row as `get` does; the body it carries is empty unless asked for.
    const view = viewOf(recordOf(row), numberOf(row.now_ms, 'now_ms'), options);
    const takenOver = numberOf(row.taken_over, 'taken_over') === 1;
    if (view.outcome === undefined) return { ...view, takenOver };
    return {
      ...view,
      takenOver,
      outcome: { ...view.outcome, bodyBytes: numberOf(row.body_bytes ?? 0, 'body_bytes') },
    };
  }
}

function summaryOf(row: Row): RecordSummary {
  const state = stateOf(row.state);
  const leaseUntil = numberOf(row.lease_until_ms, 'lease_until_ms');
  return {
    key: textOf(row.key, 'key'),
    ...(row.label == null ? {} : { label: textOf(row.label, 'label') }),
    state,
    fingerprint: textOf(row.fingerprint, 'fingerprint'),
    token: numberOf(row.token, 'token'),
    attempt: numberOf(row.attempt, 'attempt'),
    leaseUntil,
    leaseLeftMs: state === 'inProgress' ? leaseUntil - numberOf(row.now_ms, 'now_ms') : undefined,
    createdAt: numberOf(row.created_at_ms, 'created_at_ms'),
    completedAt: state === 'completed' ? optionalNumber(row.completed_at_ms, 'completed_at_ms') : undefined,
    expiresAt: numberOf(row.expires_at_ms, 'expires_at_ms'),
    status: state === 'completed' ? optionalNumber(row.status, 'status') : undefined,
    takenOver: numberOf(row.taken_over, 'taken_over') === 1,
  };
}
