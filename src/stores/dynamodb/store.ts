/**
 * @module The DynamoDB store: every transition one conditional write on the key's item. A claim on a new key is
 * one `PutItem`; a refused one answers from the item DynamoDB returns with the refusal (replay, in progress,
 * mismatch), with no second read; complete, release and renew are one `UpdateItem` fenced by the token; delete
 * turns the item into a tombstone that keeps its token. Expiry is decided by the stored times against the clock,
 * never by DynamoDB's TTL, which deletes items up to days late.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { StoreUnavailableError } from '../../core/errors.js';
import type { StoreInspector } from '../../core/inspection.js';
import { checkLabel } from '../../core/label.js';
import type {
  BeginInput,
  BeginResult,
  CompleteInput,
  KeyRecord,
  ReleaseInput,
  RenewInput,
  Store,
  StoreEndpoint,
  StoreStats,
  TransitionResult,
} from '../../core/store.js';
import { type Decision, decide, type Seen } from './claim.js';
import { OutcomeTooLargeError } from './errors.js';
import { DynamoDbInspector } from './inspect.js';
import {
  claimItem,
  DELETED,
  type Item,
  n,
  OUTCOME_NAMES,
  outcomeAttributes,
  parseItem,
  s,
  ttlOf,
} from './item.js';
import { type MigrateResult, migrate } from './migrate.js';
import { type DynamoDbStoreOptions, resolveOptions } from './options.js';
import { itemBytes, MAX_ITEM_BYTES } from './size.js';
import { describeTable } from './stats.js';
import { DynamoTable, type WriteResult } from './table.js';

/** Claims in a row one `begin` may lose to other callers changing the item before it answers. */
const MAX_ROUNDS = 8;

// A claim on a key whose item is missing, a tombstone or past its retention, with a token (`now`) above the old
// one: the write for a new key, sent first because nearly every claim is one.
const NEW_KEY = 'attribute_not_exists(#pk) OR (#token < :now AND (#state = :deleted OR #expiresAt <= :now))';
// A second claim replaces the item only as it was read: every transition changes one of these.
const UNCHANGED =
  '#token = :seenToken AND #state = :seenState AND #leaseUntil = :seenLease AND #expiresAt = :seenExpiry';
// complete, release and renew: the caller's token is the live record's current claim.
const OWNED = '#state = :inProgress AND #token = :token AND #expiresAt > :now';
const OWNED_NAMES = ['state', 'token', 'expiresAt'];

export class DynamoDbStore implements Store {
  readonly name = 'dynamodb';
  readonly endpoint: StoreEndpoint;
  /** Bounded listing (a scan, at most `scanLimit` items read) and one record's view, for tools. */
  readonly inspector: StoreInspector;
  readonly #table: DynamoTable;
  readonly #now: () => number;

  constructor(options: DynamoDbStoreOptions) {
    const resolved = resolveOptions(options);
    this.#table = new DynamoTable(resolved.client, resolved.table);
    this.#now = resolved.clock;
    this.endpoint = { system: 'aws.dynamodb', collection: resolved.table };
    this.inspector = new DynamoDbInspector(this.#table, this.#now);
  }

  /** The table the records live in. */
  get table(): string {
    return this.#table.name;
  }

  /** The caller's client (the store never creates or closes one). */
  get client(): DynamoDBClient {
    return this.#table.client;
  }

  /** Creates the table (key schema and TTL attribute) when missing; for tests and development. */
  migrate(): Promise<MigrateResult> {
    return migrate(this.#table.client, { table: this.#table.name });
  }

  async begin(input: BeginInput): Promise<BeginResult> {
    checkLabel(input.label, 'dynamodb');
    const now = this.#now();
    let decision: Decision = decide(undefined, input, now);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (decision.kind === 'answer') return decision.result;
      const { fields, seen } = decision;
      const written = await this.#claim(claimItem(input.key, fields), seen, now);
      if (written.done)
        return { kind: 'acquired', token: fields.token, attempt: fields.attempt, takeover: fields.takenOver };
      // DynamoDB returns the item with the refusal; an emulator without ReturnValuesOnConditionCheckFailure (or
      // an item deleted meanwhile) sends none, and only then is the item read.
      const found = written.found ?? (await this.#table.get('begin', input.key));
      decision = decide(found === undefined ? undefined : parseItem(found), input, now);
    }
    throw new StoreUnavailableError(
      `dynamodb begin: the item of the key changed under ${MAX_ROUNDS} claims in a row; retry`,
    );
  }

  #claim(item: Item, seen: Seen | undefined, now: number): Promise<WriteResult> {
    if (seen === undefined) {
      const values = { ':now': n(now), ':deleted': s(DELETED) };
      return this.#table.put('begin', item, NEW_KEY, values, ['pk', 'token', 'state', 'expiresAt']);
    }
    const values = {
      ':seenToken': n(seen.token),
      ':seenState': s(seen.state),
      ':seenLease': n(seen.leaseUntil),
      ':seenExpiry': n(seen.expiresAt),
    };
    return this.#table.put('begin', item, UNCHANGED, values, ['token', 'state', 'leaseUntil', 'expiresAt']);
  }

  async complete({ key, token, outcome, retentionMs }: CompleteInput): Promise<TransitionResult> {
    const now = this.#now();
    const expiresAt = now + retentionMs;
    const set: Item = {
      state: s('completed'),
      completedAt: n(now),
      expiresAt: n(expiresAt),
      ttl: ttlOf(Math.max(expiresAt, token)),
      ...outcomeAttributes(outcome),
    };
    // What the item will hold at least (the claim's fingerprint and label come on top): refused before sending.
    const bytes = itemBytes({ pk: s(key), token: n(token), ...set });
    if (bytes > MAX_ITEM_BYTES) throw new OutcomeTooLargeError(this.#table.name, bytes, MAX_ITEM_BYTES);
    return this.#owned('complete', key, token, now, set);
  }

  release({ key, token }: ReleaseInput): Promise<TransitionResult> {
    return this.#owned('release', key, token, this.#now(), { state: s('released') });
  }

  renew({ key, token, leaseMs }: RenewInput): Promise<TransitionResult> {
    const now = this.#now();
    return this.#owned('renew', key, token, now, { leaseUntil: n(now + leaseMs) });
  }

  async #owned(operation: string, key: string, token: number, now: number, set: Item) {
    const written = await this.#table.update(operation, key, {
      set,
      condition: OWNED,
      conditionNames: OWNED_NAMES,
      values: { ':inProgress': s('inProgress'), ':token': n(token), ':now': n(now) },
    });
    return written.done ? OK : FENCED;
  }

  async get(key: string): Promise<KeyRecord | undefined> {
    const item = await this.#table.get('get', key);
    if (item === undefined) return undefined;
    const found = parseItem(item);
    return found.state === DELETED || found.record.expiresAt <= this.#now() ? undefined : found.record;
  }

  /**
   * Turns a live record into a tombstone: its outcome and label go, its token and `ttl` stay, so the next claim
   * out-ranks the deleted owner and the item is still removed by TTL in the end.
   */
  async delete(key: string): Promise<boolean> {
    const written = await this.#table.update('delete', key, {
      set: { state: s(DELETED) },
      remove: [...OUTCOME_NAMES, 'label'],
      condition: 'attribute_exists(#pk) AND #state <> :deleted AND #expiresAt > :now',
      conditionNames: ['pk', 'expiresAt'],
      values: { ':deleted': s(DELETED), ':now': n(this.#now()) },
    });
    return written.done;
  }

  /**
   * DescribeTable's `ItemCount` and `TableSizeBytes`: DynamoDB's approximation, refreshed about every six hours,
   * tombstones and expired items not yet removed by TTL included. No per-state counts: those take a scan
   * (`inspector.survey`, bounded).
   */
  stats(): Promise<StoreStats> {
    return describeTable(this.#table);
  }
}

const OK: TransitionResult = { kind: 'ok' };
const FENCED: TransitionResult = { kind: 'fenced' };
