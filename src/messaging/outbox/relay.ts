/**
 * @module `OutboxRelay`: the loop that publishes outbox rows, claiming a batch under a lease in one short statement,
 * publishing it outside any transaction, then marking, retrying or dead-lettering each row; several relays may run
 * against one table.
 */
import { randomUUID } from 'node:crypto';
import { InvalidOptionsError } from '../../core/errors.js';
import { wholeNumber } from '../../core/validate.js';
import type { RelayProbe } from '../instrumentation.js';
import { pause } from '../pause.js';
import type { ClaimedRow, OutboxBackend } from './backend.js';
import { backoffDelayMs, retryHorizonMs } from './backoff.js';
import { purgeBatches } from './maintenance.js';
import { publishBatch, type RowOutcome } from './publish-batch.js';
import type { RelayEvent } from './relay-events.js';
import { type OutboxRelayOptions, type RelaySettings, resolveRelayOptions } from './relay-options.js';
import { Waker } from './waker.js';

/** What one claim–publish–settle cycle did. */
export interface CycleResult {
  readonly claimed: number;
  readonly published: number;
  readonly failed: number;
  readonly returned: number;
}

// Settling after the broker confirmed must not give up easily: a row left leased is published again later.
const SETTLE_RETRY_DELAYS_MS = [100, 400, 1_600];
const PURGE_BATCHES_PER_PASS = 20;

/**
 * Publishes outbox rows: claims a batch in one short transaction (`FOR UPDATE SKIP LOCKED`, a lease), publishes it
 * outside any transaction, then marks it published. Run one or several per database, on a `pg` pool or a MySQL /
 * MariaDB pool (`mysql2/promise` or `mariadb`: the pool's kind chooses the SQL); see docs/messaging/relay.md for the
 * ordering, retry and dead-letter guarantees and how each is tested.
 *
 * @example
 * const relay = new OutboxRelay({ pool, publisher: new NatsPublisher({ jetstream: jetstream(nc) }) });
 * await relay.start();
 * process.on('SIGTERM', () => relay.stop({ timeoutMs: 10_000 }));
 */
export class OutboxRelay {
  readonly #settings: RelaySettings;
  readonly #backend: OutboxBackend;
  readonly #waker: Waker;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #batch: AbortController | undefined;
  #nextPurgeAt = 0;
  #lastError: unknown;
  #hookFailed = false;
  readonly #probe: RelayProbe | undefined;

  constructor(options: OutboxRelayOptions) {
    this.#settings = resolveRelayOptions(options);
    this.#probe = this.#settings.instrumentation?.relay?.(this.#settings.publisher.name);
    this.#backend = this.#settings.backend;
    // MySQL has no NOTIFY: without a pg pool the waker only sleeps, and polling alone delivers.
    this.#waker = new Waker(
      this.#settings.pgPool,
      this.#settings.table.name,
      this.#settings.listen,
      (error) => this.#emit({ type: 'error', operation: 'listen', error }),
    );
  }

  /** Longest time between the first and the last publish of one message (for broker deduplication windows). */
  get retryHorizonMs(): number {
    const { maxAttempts, backoff, publishTimeoutMs, leaseMs } = this.#settings;
    return retryHorizonMs(maxAttempts, backoff, publishTimeoutMs, leaseMs);
  }

  get running(): boolean {
    return this.#loop !== undefined && !this.#stop.signal.aborted;
  }

  /** Lets the publisher check its configuration, starts listening for hints, and starts the loop. */
  async start(): Promise<void> {
    if (this.#loop !== undefined || this.#stop.signal.aborted)
      throw new InvalidOptionsError('OutboxRelay: already started');
    const warn = (message: string) => this.#emit({ type: 'warning', message });
    await this.#settings.publisher.prepare?.({ retryHorizonMs: this.retryHorizonMs, warn });
    await this.#waker.start();
    this.#loop = this.#run();
  }

  /**
   * Stops claiming, lets the batch in flight finish (publish and mark), and after `timeoutMs` aborts what is
   * still unconfirmed and hands those rows back for another relay, without counting an attempt.
   */
  async stop({ timeoutMs = 10_000 }: { timeoutMs?: number } = {}): Promise<void> {
    const wait = wholeNumber('timeoutMs', timeoutMs, 10_000);
    this.#stop.abort();
    this.#waker.wake();
    const timer = setTimeout(() => this.#batch?.abort(new Error('relay stopping')), wait);
    try {
      await this.#loop;
    } finally {
      clearTimeout(timer);
      await this.#waker.stop();
    }
  }

  /** One cycle, for tests and for running the relay from a scheduler instead of `start()`. */
  async runOnce(): Promise<CycleResult> {
    if (this.#loop !== undefined)
      throw new InvalidOptionsError('OutboxRelay: runOnce() is for a relay that was not started');
    return this.#cycle();
  }

  async #cycle(): Promise<CycleResult> {
    const { batchSize, leaseMs, publishTimeoutMs } = this.#settings;
    const token = randomUUID();
    const claimedAt = Date.now();
    const rows = await this.#backend.claim(batchSize, leaseMs, token);
    if (rows.length === 0) return { claimed: 0, published: 0, failed: 0, returned: 0 };
    const batch = new AbortController();
    this.#batch = batch;
    let outcomes: RowOutcome[];
    try {
      outcomes = await publishBatch(rows, {
        ...this.#settings,
        concurrency: this.#settings.publishConcurrency,
        startDeadline: claimedAt + leaseMs - publishTimeoutMs - Math.min(1_000, leaseMs / 10),
        signal: batch.signal,
        probe: this.#probe,
      });
    } finally {
      this.#batch = undefined;
    }
    return this.#settle(rows, outcomes, token);
  }

  async #run(): Promise<void> {
    const { minPollMs, maxPollMs, backoff } = this.#settings;
    let idleMs = minPollMs;
    let outageMs = 0;
    let errorAttempt = 0;
    while (!this.#stop.signal.aborted) {
      let cycle: CycleResult;
      try {
        cycle = await this.#cycle();
        errorAttempt = 0;
      } catch (error) {
        this.#emit({ type: 'error', operation: 'cycle', error });
        await this.#pause(backoffDelayMs(++errorAttempt, backoff));
        continue;
      }
      await this.#purgeIfDue();
      if (cycle.claimed === 0) {
        const woken = await this.#waker.sleep(idleMs);
        idleMs = woken ? minPollMs : Math.min(idleMs * 2, maxPollMs);
        continue;
      }
      idleMs = minPollMs;
      if (cycle.published === 0 && cycle.failed > 0) {
        outageMs = Math.min(outageMs === 0 ? backoff.initialMs : outageMs * 2, backoff.maxMs);
        const pauseMs = Math.round(outageMs / 2 + Math.random() * (outageMs / 2));
        this.#emit({ type: 'outage', pauseMs, error: this.#lastError });
        await this.#pause(pauseMs);
      } else {
        outageMs = 0;
      }
    }
  }

  async #settle(
    rows: readonly ClaimedRow[],
    outcomes: readonly RowOutcome[],
    token: string,
  ): Promise<CycleResult> {
    const { keepPublishedMs, maxAttempts, backoff } = this.#settings;
    const published: ClaimedRow[] = [];
    const failed: { row: ClaimedRow; error: unknown }[] = [];
    const unsent: string[] = [];
    outcomes.forEach((outcome, index) => {
      const row = rows[index]!;
      if (outcome.kind === 'published') published.push(row);
      else if (outcome.kind === 'failed') failed.push({ row, error: outcome.error });
      else unsent.push(row.id);
    });
    if (published.length > 0) {
      const ids = published.map((r) => r.id);
      const marked = await this.#write(() => this.#backend.published(ids, token, keepPublishedMs > 0));
      if (marked < published.length) this.#emit({ type: 'fenced', count: published.length - marked });
      const now = Date.now();
      const maxAgeMs = Math.max(...published.map((r) => now - r.created_at.getTime()));
      this.#emit({ type: 'published', count: marked, maxAgeMs });
    }
    if (failed.length > 0) await this.#fail(failed, published.length > 0, token, maxAttempts, backoff);
    if (unsent.length > 0) {
      const returned = await this.#write(() => this.#backend.giveBack(unsent, token));
      this.#emit({ type: 'returned', count: returned });
    }
    return {
      claimed: rows.length,
      published: published.length,
      failed: failed.length,
      returned: unsent.length,
    };
  }

  async #fail(
    failed: readonly { row: ClaimedRow; error: unknown }[],
    brokerUp: boolean,
    token: string,
    maxAttempts: number,
    backoff: RelaySettings['backoff'],
  ): Promise<void> {
    const delays = failed.map(({ row }) => backoffDelayMs(row.attempts, backoff));
    const errors = failed.map(({ error }) => describe(error));
    this.#lastError = failed[0]?.error;
    const rows = await this.#write(() =>
      this.#backend.fail({
        ids: failed.map(({ row }) => row.id),
        delays,
        errors,
        brokerUp,
        maxAttempts,
        token,
      }),
    );
    const settled = new Map(rows.map((row) => [row.id, row]));
    failed.forEach(({ row, error }, index) => {
      const after = settled.get(row.id);
      if (after === undefined) return;
      const dead = after.state === 2;
      this.#emit({
        type: 'failed',
        id: row.id,
        topic: row.topic,
        attempt: after.attempts,
        retryInMs: dead ? 0 : delays[index]!,
        dead,
        error,
      });
    });
    if (settled.size < failed.length) this.#emit({ type: 'fenced', count: failed.length - settled.size });
  }

  async #write<R>(settle: () => Promise<R>): Promise<R> {
    for (let retry = 0; ; retry++) {
      try {
        return await settle();
      } catch (error) {
        const delay = SETTLE_RETRY_DELAYS_MS[retry];
        if (delay === undefined) throw error;
        this.#emit({ type: 'error', operation: 'settle', error });
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async #purgeIfDue(): Promise<void> {
    const { keepPublishedMs, purgeIntervalMs, purgeBatchSize } = this.#settings;
    const backend = this.#backend;
    if ((keepPublishedMs === 0 && backend.purgeIdle === undefined) || Date.now() < this.#nextPurgeAt) return;
    this.#nextPurgeAt = Date.now() + purgeIntervalMs;
    try {
      if (keepPublishedMs > 0) {
        const purge = backend.purgePublished.bind(backend);
        const count = await purgeBatches(purge, keepPublishedMs, purgeBatchSize, PURGE_BATCHES_PER_PASS);
        if (count > 0) this.#emit({ type: 'purged', count });
      }
      // Bookkeeping rows, not events (MySQL's idle key rows): not counted as purged.
      await backend.purgeIdle?.(purgeBatchSize);
    } catch (error) {
      this.#emit({ type: 'error', operation: 'purge', error });
    }
  }

  /** A pause that only `stop()` cuts short (a NOTIFY must not end an outage pause). */
  #pause(ms: number): Promise<void> {
    return pause(ms, this.#stop.signal);
  }

  #emit(event: RelayEvent): void {
    this.#probe?.event(event);
    const handler = this.#settings.onEvent;
    if (handler === undefined) {
      if (event.type === 'warning') process.emitWarning(event.message, { code: 'ONCELY_OUTBOX' });
      return;
    }
    try {
      handler(event);
    } catch (error) {
      // A throwing observability hook must not stop the relay, nor go unseen: one warning per relay.
      if (this.#hookFailed) return;
      this.#hookFailed = true;
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      process.emitWarning(`OutboxRelay: onEvent threw on a ${event.type} event (${reason})`, {
        code: 'ONCELY_OUTBOX',
      });
    }
  }
}

function describe(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 1_000 ? `${text.slice(0, 1_000)}…` : text;
}
