/**
 * @module The DynamoDB store's item layout: one item per storage key (partition key `pk`, no sort key), its
 * attributes, and the way back from an item to a typed record. Times are milliseconds by the store's clock;
 * `ttl` (epoch seconds) only tells DynamoDB's TTL when it may delete the item, and is never read back: whether a
 * record is live is decided by `expiresAt` against the clock, since TTL deletion lags by up to days.
 *
 *   pk           S     the storage key (hashed scoped key)
 *   state        S     inProgress | completed | released | deleted (a tombstone, kept so tokens keep rising)
 *   fingerprint  S     the request's fingerprint, from the claim that created the record
 *   token        N     the fencing token of the latest claim
 *   attempt      N     claims so far (first run, takeovers, runs after a release)
 *   takenOver    BOOL  whether the latest claim was a takeover
 *   leaseUntil   N     when the lease ends (ms)
 *   createdAt    N     when the record was created (ms)
 *   expiresAt    N     when the record stops being a record (ms)
 *   ttl          N     epoch seconds after which DynamoDB may delete the item
 *   label        S     what the key belongs to (optional, kept from the first claim)
 *   completedAt, status (N), headers (L of [S, S]), body (B, absent when empty), bodyBytes (N), encoding (S),
 *   storage (S): the outcome, completed records only
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { CorruptRecordError } from '../../core/errors.js';
import type {
  BodyEncoding,
  BodyStorage,
  HeaderPairs,
  KeyRecord,
  KeyState,
  StoredOutcome,
} from '../../core/store.js';

export type Item = Record<string, AttributeValue>;

/** A tombstone's state: the record is gone, its token stays until the clock has passed it. */
export const DELETED = 'deleted';

/** What a claim writes: the whole item, so every claim is one `PutItem`. */
export interface ClaimFields {
  readonly fingerprint: string;
  readonly token: number;
  readonly attempt: number;
  readonly takenOver: boolean;
  readonly leaseUntil: number;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly label: string | undefined;
}

/**
 * Seconds past `expiresAt` (or past the token, for a tombstone) before DynamoDB may delete the item. The item
 * must outlive the record, and a tombstone its token, by every host's clock: an hour covers any skew between the
 * hosts and AWS that leases could survive anyway, and costs only the storage of items already past their time.
 */
export const TTL_GRACE_SECONDS = 3_600;

export const ttlOf = (untilMs: number): AttributeValue => ({
  N: String(Math.ceil(untilMs / 1000) + TTL_GRACE_SECONDS),
});

export const n = (value: number): AttributeValue => ({ N: String(value) });
export const s = (value: string): AttributeValue => ({ S: value });

export function claimItem(key: string, fields: ClaimFields): Item {
  return {
    pk: s(key),
    state: s('inProgress'),
    fingerprint: s(fields.fingerprint),
    token: n(fields.token),
    attempt: n(fields.attempt),
    takenOver: { BOOL: fields.takenOver },
    leaseUntil: n(fields.leaseUntil),
    createdAt: n(fields.createdAt),
    expiresAt: n(fields.expiresAt),
    ttl: ttlOf(Math.max(fields.expiresAt, fields.token)),
    ...(fields.label === undefined ? {} : { label: s(fields.label) }),
  };
}

/** The outcome's attributes, as `complete` sets them. The body is left out when empty (see `outcomeOf`). */
export function outcomeAttributes(outcome: StoredOutcome): Item {
  const { status, headers, body, encoding, storage } = outcome;
  return {
    status: n(status),
    headers: { L: headers.map(([name, value]) => ({ L: [s(name), s(value)] })) },
    bodyBytes: n(body.byteLength),
    encoding: s(encoding),
    storage: s(storage),
    ...(body.byteLength === 0 ? {} : { body: { B: body } }),
  };
}

/** The attributes of an outcome, removed when a record becomes a tombstone. */
export const OUTCOME_NAMES = [
  'completedAt',
  'status',
  'headers',
  'body',
  'bodyBytes',
  'encoding',
  'storage',
] as const;

/** Every attribute but the body: what listings read. */
export const SUMMARY_NAMES = [
  'pk',
  'state',
  'fingerprint',
  'token',
  'attempt',
  'takenOver',
  'leaseUntil',
  'createdAt',
  'expiresAt',
  'label',
  'completedAt',
  'status',
  'headers',
  'bodyBytes',
  'encoding',
  'storage',
] as const;

const STATES: readonly string[] = ['inProgress', 'completed', 'released', DELETED];
const ENCODINGS: readonly BodyEncoding[] = ['identity', 'gzip', 'br'];
const STORAGES: readonly BodyStorage[] = ['inline', 'blob', 'omitted'];

/** An item as read, checked: every field the store decides on, or `CorruptRecordError`. */
export interface StoredItem {
  readonly record: KeyRecord;
  /** `deleted` for a tombstone, otherwise the record's state. */
  readonly state: KeyState | typeof DELETED;
  readonly takenOver: boolean;
  /** The body's size as stored, whether or not the body was read. */
  readonly bodyBytes: number;
}

/**
 * Parses an item. `withBody: false` is for reads that left the body out (listings, views without the body): the
 * outcome then carries an empty body and `bodyBytes` tells its size.
 */
export function parseItem(item: Item, withBody = true): StoredItem {
  const key = str(item, 'pk');
  const state = str(item, 'state');
  if (!STATES.includes(state)) throw corrupt(key, `state is ${state}`);
  const completed = state === 'completed';
  const bodyBytes = completed ? num(item, 'bodyBytes', key) : 0;
  const label = item.label === undefined ? undefined : str(item, 'label');
  const record: KeyRecord = {
    key,
    state: (state === DELETED ? 'released' : state) as KeyState,
    fingerprint: str(item, 'fingerprint'),
    token: num(item, 'token', key),
    attempt: num(item, 'attempt', key),
    leaseUntil: num(item, 'leaseUntil', key),
    createdAt: num(item, 'createdAt', key),
    completedAt: completed ? num(item, 'completedAt', key) : undefined,
    expiresAt: num(item, 'expiresAt', key),
    outcome: completed ? outcomeOf(item, key, withBody, bodyBytes) : undefined,
    ...(label === undefined ? {} : { label }),
  };
  return {
    record,
    state: state as KeyState | typeof DELETED,
    takenOver: item.takenOver?.BOOL === true,
    bodyBytes,
  };
}

function outcomeOf(item: Item, key: string, withBody: boolean, bodyBytes: number): StoredOutcome {
  const encoding = str(item, 'encoding') as BodyEncoding;
  const storage = str(item, 'storage') as BodyStorage;
  if (!ENCODINGS.includes(encoding) || !STORAGES.includes(storage))
    throw corrupt(key, `encoding ${encoding}, storage ${storage}`);
  const bytes = item.body?.B;
  const body = bytes === undefined ? new Uint8Array(0) : new Uint8Array(bytes);
  if (withBody && body.byteLength !== bodyBytes)
    throw corrupt(key, `body of ${body.byteLength} bytes, recorded as ${bodyBytes}`);
  return { status: num(item, 'status', key), headers: headersOf(item, key), body, encoding, storage };
}

function headersOf(item: Item, key: string): HeaderPairs {
  const list = item.headers?.L;
  if (list === undefined) throw corrupt(key, 'headers missing');
  return list.map((pair) => {
    const [name, value] = pair.L ?? [];
    if (name?.S === undefined || value?.S === undefined || pair.L?.length !== 2)
      throw corrupt(key, 'a header is not a pair of strings');
    return [name.S, value.S] as const;
  });
}

function str(item: Item, name: string): string {
  const value = item[name]?.S;
  if (value === undefined) throw corrupt(item.pk?.S ?? '?', `${name} missing`);
  return value;
}

function num(item: Item, name: string, key: string): number {
  const text = item[name]?.N;
  const value = text === undefined ? Number.NaN : Number(text);
  if (!Number.isSafeInteger(value)) throw corrupt(key, `${name} is ${String(text)}`);
  return value;
}

const corrupt = (key: string, detail: string) =>
  new CorruptRecordError(`dynamodb: the item of key ${key} is not an oncely record (${detail})`);
