/**
 * @module The memory store's inspector: a walk over its records in insertion order (in progress first), at most
 * `scanLimit` entries visited, expired ones included (they are work too, until swept).
 */
import type { RecordViewOptions, StoreInspector, Survey, SurveyOptions } from '../core/inspection.js';
import { isMarked, summaryOf, viewOf } from '../core/inspection-records.js';
import type { KeyRecord } from '../core/store.js';
import { SurveyTally } from '../core/survey-tally.js';

export interface MemoryRecords {
  /** Every record held, expired ones not yet swept included, as live iterators (no copy); walked synchronously. */
  walk(): readonly Iterable<KeyRecord>[];
  now(): number;
  get(key: string): Promise<KeyRecord | undefined>;
}

export class MemoryInspector implements StoreInspector {
  readonly #records: MemoryRecords;

  constructor(records: MemoryRecords) {
    this.#records = records;
  }

  async survey(options: SurveyOptions): Promise<Survey> {
    const tally = new SurveyTally(options);
    const now = this.#records.now();
    walk: for (const records of this.#records.walk()) {
      for (const record of records) {
        if (tally.left === 0) {
          tally.truncate();
          break walk;
        }
        tally.spend(1);
        const bodyBytes = record.outcome?.body.byteLength ?? 0;
        const headers = record.outcome?.headers ?? [];
        const marked = isMarked(options.mark, record.state, record.fingerprint, { headers, bodyBytes });
        tally.add(summaryOf(record, now), now, marked);
      }
    }
    return tally.result();
  }

  async record(key: string, options?: RecordViewOptions) {
    const record = await this.#records.get(key);
    return record === undefined ? undefined : viewOf(record, this.#records.now(), options);
  }
}
