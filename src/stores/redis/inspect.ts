/**
 * @module The Redis store's inspector. A survey walks the prefix with SCAN (every master of a Cluster), never
 * KEYS, and reads each record's first bytes with a pipelined GETRANGE, never a body. `scanLimit` bounds the keys
 * SCAN walks, all nodes together, not the records it finds: MATCH filters after the walk, so in a Redis where
 * oncely's records are a few among millions of other keys, a bound on records found would still walk them all.
 * Each SCAN asks for at most what is left of the bound (its COUNT); a walk that runs out first is `truncated`.
 */
import type {
  RecordView,
  RecordViewOptions,
  StoreInspector,
  Survey,
  SurveyOptions,
} from '../../core/inspection.js';
import { isMarked, summaryOf, viewOf } from '../../core/inspection-records.js';
import type { KeyRecord } from '../../core/store.js';
import { SurveyTally } from '../../core/survey-tally.js';
import { scanWithin } from './bounded-scan.js';
import { toStoreError } from './connection.js';
import { PEEK, peekRecord } from './inspect-peek.js';
import { escapeGlob, type KeyLayout } from './keys.js';
import { type RedisNode, type RedisTransport, timeOf } from './transport.js';

export interface RedisInspectorSettings {
  readonly transport: RedisTransport;
  readonly keys: KeyLayout;
  /** The store's clock, when it has one (tests); else each node's `TIME`. */
  readonly clock: (() => number) | undefined;
  /** The store's `get`: whole records (those that need more than a peek, and 0.1 HASH records). */
  readonly get: (key: string) => Promise<KeyRecord | undefined>;
}

export class RedisInspector implements StoreInspector {
  readonly #settings: RedisInspectorSettings;

  constructor(settings: RedisInspectorSettings) {
    this.#settings = settings;
  }

  async survey(options: SurveyOptions): Promise<Survey> {
    const tally = new SurveyTally(options);
    try {
      await this.#walk(tally, options);
    } catch (error) {
      throw toStoreError('survey', error);
    }
    return tally.result();
  }

  /** The record through the store's `get` script (whatever its layout), its body dropped unless asked for. */
  async record(key: string, options?: RecordViewOptions): Promise<RecordView | undefined> {
    const record = await this.#settings.get(key);
    if (record === undefined) return undefined;
    const [node] = this.#settings.clock === undefined ? await this.#settings.transport.nodes() : [];
    return viewOf(record, await this.#now(node), options);
  }

  async #walk(tally: SurveyTally, options: SurveyOptions): Promise<void> {
    const { transport, keys } = this.#settings;
    const keyPrefix = transport.keyPrefix;
    // The records' pattern, narrowed to the storage keys that start with `keyPrefix` when one is given.
    const head = keys.record(options.keyPrefix ?? '').slice(0, -1);
    const pattern = `${escapeGlob(keyPrefix)}${escapeGlob(head)}*}`;
    for (const node of await transport.nodes()) {
      const now = await this.#now(node);
      const read = (found: string[]) =>
        this.#read(
          node,
          found.map((k) => k.slice(keyPrefix.length)),
          tally,
          options,
          now,
        );
      if (!(await scanWithin(node, pattern, tally, read))) {
        tally.truncate();
        return;
      }
    }
  }

  async #read(node: RedisNode, redisKeys: string[], tally: SurveyTally, options: SurveyOptions, now: number) {
    const replies = await node.send(redisKeys.map((redisKey) => ['GETRANGE', redisKey, 0, PEEK - 1]));
    for (const [i, redisKey] of redisKeys.entries()) {
      const key = this.#settings.keys.keyOf(redisKey);
      const bytes = replies[i];
      if (key === undefined) continue;
      // WRONGTYPE: a record of oncely 0.1 (a HASH), which the store's get script reads; they are rare.
      const legacy = bytes instanceof Error && bytes.message.includes('WRONGTYPE');
      const peeked = Buffer.isBuffer(bytes) ? peekRecord(key, bytes, now, options.mark) : undefined;
      if (peeked?.kind === 'record') tally.add(peeked.summary, now, peeked.marked);
      else if (legacy || peeked?.kind === 'tooShort') await this.#addWhole(key, tally, options, now);
    }
  }

  async #addWhole(key: string, tally: SurveyTally, options: SurveyOptions, now: number): Promise<void> {
    const record = await this.#settings.get(key).catch(() => undefined);
    if (record === undefined) return;
    const outcome = {
      headers: record.outcome?.headers ?? [],
      bodyBytes: record.outcome?.body.byteLength ?? 0,
    };
    tally.add(summaryOf(record, now), now, isMarked(options.mark, record.state, record.fingerprint, outcome));
  }

  async #now(node: RedisNode | undefined): Promise<number> {
    const { clock } = this.#settings;
    if (clock !== undefined) return clock();
    if (node === undefined) throw new Error('redis: no node to read TIME from');
    const [reply] = await node.send([['TIME']]);
    if (reply instanceof Error) throw reply;
    return timeOf(reply);
  }
}
