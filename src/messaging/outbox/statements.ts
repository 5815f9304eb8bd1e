// This file's declarations use Node's types (Buffer, node:*): the directive, kept in its .d.ts, loads @types/node
// for users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />
import type { OutboxTable } from './table.js';

/** Row states in `oncely_outbox.state`. */
export const PENDING = 0;
export const PUBLISHED = 1;
export const DEAD = 2;

/** A claimed row as the relay reads it. */
export interface ClaimedRow {
  readonly id: string;
  readonly topic: string;
  readonly key: string | null;
  readonly payload: Buffer;
  readonly content_type: string;
  readonly headers: Record<string, string>;
  readonly attempts: number;
  readonly created_at: Date;
}

/**
 * The relay's SQL for one table, built once per relay. Every statement is a single round trip; none holds a
 * row lock beyond its own statement, so no lock is ever held while a broker is being called.
 */
export function relayStatements({ name: t }: OutboxTable) {
  return {
    /**
     * Claims up to $1 rows for $2 ms under claim token $3, in one statement (its own short transaction).
     *
     * - Horizon: only rows written by transactions older than every running one (xid below the snapshot's xmin).
     *   Those rows are final: no running or future transaction can add a row that sorts before them in
     *   (xid, id) order, so claiming in that order never passes over a row that commits later.
     * - Order per key: a row is claimable only if no other pending row of its key sorts before it. A row in
     *   flight or backing off is still pending, so it holds back its own key and nothing else. (A replayed dead
     *   letter gets a fresh xid, so it queues behind its key's pending rows instead of overtaking one in flight.)
     * - SKIP LOCKED: relays claiming at the same time split the heads between them instead of queuing.
     */
    claim: `
      WITH candidates AS (
        SELECT o.id FROM ${t} o
        WHERE o.state = 0
          AND o.xid < pg_snapshot_xmin(pg_current_snapshot())
          AND o.available_at <= now()
          AND (o.lease_until IS NULL OR o.lease_until <= now())
          AND (o.key IS NULL OR NOT EXISTS (
            SELECT 1 FROM ${t} p
            WHERE p.state = 0 AND p.key = o.key AND (p.xid, p.id) < (o.xid, o.id)))
        ORDER BY o.xid, o.id
        LIMIT $1
        FOR UPDATE OF o SKIP LOCKED)
      UPDATE ${t} o
      SET lease_until = now() + $2 * interval '1 millisecond', leased_by = $3, attempts = o.attempts + 1
      WHERE o.id = ANY(ARRAY(SELECT id FROM candidates))
      RETURNING o.id::text AS id, o.topic, o.key, o.payload, o.content_type, o.headers, o.attempts, o.created_at`,

    /** Marks rows published if claim token $2 still holds them (a takeover fences a stalled relay off). */
    markPublished: `
      UPDATE ${t} SET state = 1, published_at = now(), lease_until = NULL, leased_by = NULL
      WHERE id = ANY($1::bigint[]) AND leased_by = $2 AND state = 0`,

    /** Same, deleting the rows at once (keepPublishedMs = 0): one write per row instead of two. */
    deletePublished: `DELETE FROM ${t} WHERE id = ANY($1::bigint[]) AND leased_by = $2 AND state = 0`,

    /**
     * Schedules failed rows for a retry after their own delay, or dead-letters those at the attempt limit when
     * the failure is the message's fault ($4: another message of the batch went through, so the broker is up).
     */
    fail: `
      UPDATE ${t} o
      SET lease_until = NULL, leased_by = NULL, last_error = f.error,
          available_at = now() + f.delay_ms * interval '1 millisecond',
          state = CASE WHEN $4 AND o.attempts >= $5 THEN 2 ELSE 0 END,
          dead_at = CASE WHEN $4 AND o.attempts >= $5 THEN now() END
      FROM unnest($1::bigint[], $2::integer[], $3::text[]) AS f(id, delay_ms, error)
      WHERE o.id = f.id AND o.leased_by = $6 AND o.state = 0
      RETURNING o.id::text AS id, o.state, o.attempts`,

    /** Gives rows back untouched (shutdown, or too close to the lease's end to start): the attempt is not counted. */
    giveBack: `
      UPDATE ${t} SET lease_until = NULL, leased_by = NULL, attempts = greatest(attempts - 1, 0)
      WHERE id = ANY($1::bigint[]) AND leased_by = $2 AND state = 0`,

    /** Removes up to $2 published rows older than $1 ms, oldest first, skipping rows another purge holds. */
    purgePublished: `
      WITH doomed AS (
        SELECT id FROM ${t} WHERE state = 1 AND published_at <= now() - $1 * interval '1 millisecond'
        ORDER BY published_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      DELETE FROM ${t} o USING doomed d WHERE o.id = d.id`,
  };
}

export type RelayStatements = ReturnType<typeof relayStatements>;
