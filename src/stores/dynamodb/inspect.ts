/**
 * @module The DynamoDB store's inspector. A survey is a strongly consistent Scan, page by page, at most
 * `scanLimit` items read (tombstones and other tables' items of a shared table count too: they are read as well),
 * never a body; `truncated` when it stopped there with items left. A record's view is one consistent GetItem,
 * reading the body only when asked.
 */
import type {
  RecordView,
  RecordViewOptions,
  StoreInspector,
  Survey,
  SurveyOptions,
} from '../../core/inspection.js';
import { isMarked, summaryOf, viewOf } from '../../core/inspection-records.js';
import { SurveyTally } from '../../core/survey-tally.js';
import { DELETED, type Item, parseItem, SUMMARY_NAMES } from './item.js';
import type { DynamoTable } from './table.js';

/** Items per Scan page: DynamoDB stops a page at 1 MB anyway; this keeps each call short. */
const PAGE = 500;

export class DynamoDbInspector implements StoreInspector {
  readonly #table: DynamoTable;
  readonly #now: () => number;

  constructor(table: DynamoTable, now: () => number) {
    this.#table = table;
    this.#now = now;
  }

  async survey(options: SurveyOptions): Promise<Survey> {
    const tally = new SurveyTally(options);
    const now = this.#now();
    let start: Item | undefined;
    do {
      if (tally.left === 0) {
        tally.truncate();
        break;
      }
      const page = await this.#table.scan(
        SUMMARY_NAMES,
        Math.min(tally.left, PAGE),
        start,
        options.keyPrefix,
      );
      tally.spend(page.ScannedCount ?? 0);
      for (const item of page.Items ?? []) {
        const found = parseItem(item, false);
        if (found.state === DELETED) continue;
        const { record } = found;
        const outcome = { headers: record.outcome?.headers ?? [], bodyBytes: found.bodyBytes };
        const marked = isMarked(options.mark, record.state, record.fingerprint, outcome);
        tally.add({ ...summaryOf(record, now), takenOver: found.takenOver }, now, marked);
      }
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return tally.result();
  }

  async record(key: string, options: RecordViewOptions = {}): Promise<RecordView | undefined> {
    const names = options.body === true ? undefined : SUMMARY_NAMES;
    const item = await this.#table.get('inspect', key, names);
    if (item === undefined) return undefined;
    const found = parseItem(item, options.body === true);
    const now = this.#now();
    if (found.state === DELETED || found.record.expiresAt <= now) return undefined;
    const view = viewOf(found.record, now, options);
    const takenOver = found.takenOver;
    if (view.outcome === undefined) return { ...view, takenOver };
    return { ...view, takenOver, outcome: { ...view.outcome, bodyBytes: found.bodyBytes } };
  }
}
