/**
 * @module How a claim is decided from the item a refused write hands back. `begin` first writes as if the key were
 * new (the common case): one conditional `PutItem` that succeeds on a missing item, a tombstone or an expired
 * record. When it is refused, DynamoDB returns the item it found (`ReturnValuesOnConditionCheckFailure`), and
 * `decide` tells from that item alone what the answer is: replay, in progress, mismatch, or a claim to write
 * (after a release, on a lease that ran out, or when tokens ran ahead of the clock). Such a claim is a second
 * `PutItem`, conditioned on the item being exactly as it was read, so of several racing callers one wins.
 */
import { CorruptRecordError } from '../../core/errors.js';
import { type BeginInput, type BeginResult, nextFencingToken } from '../../core/store.js';
import { type ClaimFields, DELETED, type StoredItem } from './item.js';

/** The fields a second write requires unchanged: every transition changes at least one of them. */
export interface Seen {
  readonly token: number;
  readonly state: string;
  readonly leaseUntil: number;
  readonly expiresAt: number;
}

export type Decision =
  | { readonly kind: 'answer'; readonly result: Exclude<BeginResult, { kind: 'acquired' }> }
  | {
      readonly kind: 'claim';
      readonly fields: ClaimFields;
      /** The item the claim replaces, as read; undefined for a key with no item at all. */
      readonly seen: Seen | undefined;
    };

/** The claim that creates a record: attempt 1, the caller's fingerprint and label. */
export function freshClaim(input: BeginInput, now: number, token: number): ClaimFields {
  return {
    fingerprint: input.fingerprint,
    token,
    attempt: 1,
    takenOver: false,
    leaseUntil: now + input.leaseMs,
    createdAt: now,
    expiresAt: now + input.retentionMs,
    label: input.label,
  };
}

/** What `begin` does about the item it found (undefined: none). `now` is the store's clock. */
export function decide(found: StoredItem | undefined, input: BeginInput, now: number): Decision {
  if (found === undefined) return { kind: 'claim', fields: freshClaim(input, now, now), seen: undefined };
  const { record } = found;
  const seen: Seen = {
    token: record.token,
    state: found.state,
    leaseUntil: record.leaseUntil,
    expiresAt: record.expiresAt,
  };
  const token = nextFencingToken(record.token, now);
  // Gone (deleted, or past its retention though TTL has not removed it yet): the key is new, its token still
  // out-ranks the old one.
  if (found.state === DELETED || record.expiresAt <= now)
    return { kind: 'claim', fields: freshClaim(input, now, token), seen };
  if (found.state === 'released') {
    // The record continues: attempts count on, the first claim's label and creation time stay.
    const fields = {
      ...freshClaim(input, now, token),
      attempt: record.attempt + 1,
      createdAt: record.createdAt,
      label: record.label,
    };
    return { kind: 'claim', fields, seen };
  }
  if (record.fingerprint !== input.fingerprint) return { kind: 'answer', result: { kind: 'mismatch' } };
  if (found.state === 'completed') {
    const { outcome, completedAt } = record;
    if (outcome === undefined || completedAt === undefined)
      throw new CorruptRecordError(`dynamodb: the completed item of key ${record.key} has no outcome`);
    return { kind: 'answer', result: { kind: 'replay', outcome, completedAt } };
  }
  if (record.leaseUntil > now) {
    const result = {
      kind: 'inProgress',
      retryAfterMs: record.leaseUntil - now,
      attempt: record.attempt,
    } as const;
    return { kind: 'answer', result };
  }
  // The lease ran out: a takeover keeps the record (fingerprint, label, creation) and counts the attempt.
  const fields = {
    ...freshClaim(input, now, token),
    attempt: record.attempt + 1,
    takenOver: true,
    createdAt: record.createdAt,
    label: record.label,
  };
  return { kind: 'claim', fields, seen };
}
