/**
 * @module `EventLog`: what the engine reports, buffered in memory and written into the store every `flushMs` for
 * the dashboard (per-type counts and the notable events), in one round trip to Redis or PostgreSQL.
 */
import { InvalidOptionsError } from '../../core/errors.js';
import type { EventHandler, OncelyEvent } from '../../core/events.js';
import { knownOptions, wholeNumber } from '../../core/validate.js';
import { type DashboardSource, type ResolvedSource, resolveSource } from '../source.js';
import { bucketOf, type EventBatch, type LoggedEvent, loggedEvent } from './entry.js';
import { flushToPostgres, migrateEvents } from './postgres.js';
import { flushToRedis } from './redis.js';

// Declared beside the entries it carries, where postgres.ts and redis.ts read it without importing this module.
export type { EventBatch } from './entry.js';

export interface EventLogOptions {
  /** Where to write: the same client and prefix (or pool and schema) as the application's store. */
  readonly source: DashboardSource;
  /** How often buffered events are written, ms. Default 2,000. */
  readonly flushMs?: number;
  /** How many notable events (takeover, fenced, leaseLost, storeError) the log keeps. Default 500. */
  readonly keep?: number;
  /** How long the per-type counts behind the rate charts are kept, ms. Default 3,600,000 (1 hour). */
  readonly countsRetentionMs?: number;
  /** Most notable events held between two flushes (the oldest are dropped past it). Default 1,000. */
  readonly maxBuffered?: number;
}

/**
 * Writes what the engine reports into the store, for the dashboard: every event counted per type in 10-second
 * buckets (the rate charts), the notable ones kept one by one (the recent-events panel). Give `log.onEvent` as
 * the `onEvent` of an engine, an HTTP adapter or an inbox; several processes may write into one log.
 *
 * The request path never waits for it: `onEvent` only adds to memory, and a timer writes the batch every
 * `flushMs` in one round trip (a pipeline on Redis, one statement on PostgreSQL). A failed flush keeps its counts
 * for the next one; the events beyond `maxBuffered` are dropped, and `dropped` says how many.
 *
 * @example
 * const log = new EventLog({ source: { redis: client } });
 * app.use(idempotency({ store: new RedisStore({ client }), onEvent: log.onEvent }));
 * process.on('SIGTERM', () => log.close()); // writes what is buffered
 */
export class EventLog {
  readonly #source: ResolvedSource;
  readonly #flushMs: number;
  readonly #keep: number;
  readonly #countsRetentionMs: number;
  readonly #maxBuffered: number;
  #events: LoggedEvent[] = [];
  #counts = new Map<number, Map<string, number>>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #closed = false;
  #dropped = 0;

  constructor(options: EventLogOptions) {
    if (options === null || typeof options !== 'object')
      throw new InvalidOptionsError('EventLog needs options: new EventLog({ source })');
    knownOptions('EventLog', options, ['source', 'flushMs', 'keep', 'countsRetentionMs', 'maxBuffered']);
    this.#source = resolveSource('EventLog', options.source);
    this.#flushMs = wholeNumber('flushMs', options.flushMs, 2_000, { min: 10, max: 600_000 });
    this.#keep = wholeNumber('keep', options.keep, 500, { min: 1, max: 100_000 });
    this.#countsRetentionMs = wholeNumber('countsRetentionMs', options.countsRetentionMs, 3_600_000, {
      min: 60_000,
    });
    this.#maxBuffered = wholeNumber('maxBuffered', options.maxBuffered, 1_000, { min: 1 });
  }

  /** The engine hook: counts the event, keeps it if notable, and never throws or waits. */
  readonly onEvent: EventHandler = (event: OncelyEvent) => {
    if (this.#closed) return;
    const at = Date.now();
    const bucket = bucketOf(at);
    const counts = this.#counts.get(bucket) ?? new Map<string, number>();
    counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
    this.#counts.set(bucket, counts);
    const logged = loggedEvent(event, at);
    if (logged !== undefined) {
      this.#events.push(logged);
      if (this.#events.length > this.#maxBuffered) {
        this.#dropped += this.#events.length - this.#maxBuffered;
        this.#events.splice(0, this.#events.length - this.#maxBuffered);
      }
    }
    // Started by the first event, so an idle log keeps no timer; unref'd, so it never holds a process open.
    this.#timer ??= setInterval(() => void this.flush().catch(() => {}), this.#flushMs).unref();
  };

  /** Notable events dropped because flushes kept failing (the buffer was full). */
  get dropped(): number {
    return this.#dropped;
  }

  /** PostgreSQL: creates the log's two tables in the source's schema (idempotent). Redis needs nothing. */
  async migrate(): Promise<void> {
    if (this.#source.kind === 'postgres') await migrateEvents(this.#source);
  }

  /** Writes what is buffered now. Rejects when the store does; what was not written is kept for the next flush. */
  flush(): Promise<void> {
    // One flush at a time: a second caller waits for the one running, then writes what arrived meanwhile.
    const run = (this.#flushing ?? Promise.resolve()).catch(() => {}).then(() => this.#flushOnce());
    this.#flushing = run;
    return run;
  }

  /** Stops the timer and writes what is buffered. Events after this are ignored. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  async #flushOnce(): Promise<void> {
    if (this.#events.length === 0 && this.#counts.size === 0) return;
    const batch: EventBatch = {
      at: Date.now(),
      events: this.#events,
      counts: this.#counts,
      keep: this.#keep,
      countsRetentionMs: this.#countsRetentionMs,
    };
    this.#events = [];
    this.#counts = new Map();
    try {
      if (this.#source.kind === 'redis') await flushToRedis(this.#source, batch);
      else await flushToPostgres(this.#source, batch);
    } catch (error) {
      this.#restore(batch);
      throw error;
    }
  }

  /** Puts an unwritten batch back in front of what arrived since, within the buffer's bound. */
  #restore(batch: EventBatch): void {
    const events = [...batch.events, ...this.#events];
    if (events.length > this.#maxBuffered) {
      this.#dropped += events.length - this.#maxBuffered;
      events.splice(0, events.length - this.#maxBuffered);
    }
    this.#events = events;
    for (const [bucket, counts] of batch.counts) {
      const merged = this.#counts.get(bucket) ?? new Map<string, number>();
      for (const [type, count] of counts) merged.set(type, (merged.get(type) ?? 0) + count);
      this.#counts.set(bucket, merged);
    }
    // Counts older than the retention would be trimmed on arrival anyway: do not carry them forever.
    const oldest = bucketOf(Date.now() - this.#countsRetentionMs);
    for (const bucket of this.#counts.keys()) if (bucket < oldest) this.#counts.delete(bucket);
  }
}
