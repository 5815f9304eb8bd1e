/**
 * @module The seam between the outbox's logic and its database: what the relay and the maintenance functions ask of a
 * dialect (claim, settle, purge, count, dead letters, migrate), and the rows they get back. PostgreSQL and MySQL each
 * implement it with SQL files of their own; the relay's loop, its retries and its events exist once, above it.
 */
// This file's declarations use Node's types (Buffer): the directive, kept in its .d.ts, loads @types/node for
// users whose tsconfig does not list it (TypeScript 6+ includes no @types by default). See docs/install.md.
/// <reference types="node" preserve="true" />

/** A claimed row as the relay reads it. */
export interface ClaimedRow {
  readonly id: string;
  readonly topic: string;
  readonly key: string | null;
  readonly payload: Buffer;
  readonly content_type: string;
  readonly headers: Record<string, string>;
  /** Attempts, counting this claim. */
  readonly attempts: number;
  readonly created_at: Date;
}

/** A message the relay gave up on after `maxAttempts`, kept with its last error until replayed or discarded. */
export interface DeadLetter {
  readonly id: string;
  readonly topic: string;
  readonly key: string | null;
  readonly payload: Buffer;
  readonly contentType: string;
  readonly headers: Record<string, string>;
  readonly attempts: number;
  readonly createdAt: Date;
  readonly deadAt: Date;
  readonly lastError: string | null;
}

/** What `outboxStats` reports (for `oncely stats` and dashboards). */
export interface OutboxStats {
  /** Rows not yet published: waiting, in flight or backing off. */
  readonly pending: number;
  /** Pending rows a relay holds right now. */
  readonly inFlight: number;
  /** Pending rows that failed at least once and wait for their retry. */
  readonly retrying: number;
  /** Published rows kept (with `keepPublishedMs > 0`) and not purged yet. */
  readonly published: number;
  readonly dead: number;
  /** Age of the oldest pending row, ms; 0 when none. The lag to watch. */
  readonly oldestPendingAgeMs: number;
  /** Most attempts among pending rows. */
  readonly maxAttempts: number;
  /**
   * How long the oldest running writing transaction of the server has been open, ms (0 when none). If it wrote
   * outbox events, it holds their keys: other writers of those keys wait for it, and its events wait for its commit.
   * On MySQL it needs the PROCESS privilege (information_schema.INNODB_TRX), and is 0 without it.
   */
  readonly oldestTransactionAgeMs: number;
}

/** The failed rows of a batch, and what the relay decided for them. */
export interface FailInput {
  readonly ids: readonly string[];
  /** Retry delay per row, ms. */
  readonly delays: readonly number[];
  /** Last error per row (at most 1,000 characters). */
  readonly errors: readonly string[];
  /** Another message of the batch went through: the failures are the messages' own (they may be dead-lettered). */
  readonly brokerUp: boolean;
  readonly maxAttempts: number;
  readonly token: string;
}

/** A failed row the claim still held, after the fail: retried (state 0) or dead-lettered (state 2). */
export interface FailedRow {
  readonly id: string;
  readonly state: number;
  readonly attempts: number;
}

/** Dead letters to act on: some ids (checked digit strings), or all; optionally one topic's. */
export interface DeadLetterFilter {
  readonly ids: readonly string[] | null;
  readonly topic: string | null;
}

/** One dialect's outbox, bound to a database handle (a `pg` pool or client, a MySQL pool) and a schema. */
export interface OutboxBackend {
  readonly dialect: 'postgres' | 'mysql';
  /** Leases up to `batchSize` publishable rows for `leaseMs` under `token`, in one short transaction. */
  claim(batchSize: number, leaseMs: number, token: string): Promise<ClaimedRow[]>;
  /** The broker confirmed these rows: delete them (`keep` false) or mark them published. Resolves with the count. */
  published(ids: readonly string[], token: string, keep: boolean): Promise<number>;
  fail(input: FailInput): Promise<FailedRow[]>;
  /** Hands rows back unpublished, taking back the attempt. Resolves with the count. */
  giveBack(ids: readonly string[], token: string): Promise<number>;
  /** Removes one batch of rows published at least `olderThanMs` ago. Resolves with the count. */
  purgePublished(olderThanMs: number, batchSize: number): Promise<number>;
  /**
   * Housekeeping a dialect needs besides published rows, run by the relay on its purge interval (MySQL: the key
   * rows of keys nobody wrote for a while). Resolves with the count removed.
   */
  purgeIdle?(batchSize: number): Promise<number>;
  stats(): Promise<OutboxStats>;
  listDeadLetters(after: string, topic: string | null, limit: number): Promise<DeadLetter[]>;
  replayDeadLetters(filter: DeadLetterFilter): Promise<number>;
  discardDeadLetters(filter: DeadLetterFilter): Promise<number>;
}
