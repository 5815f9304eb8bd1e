import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore, type OncelyEvent } from '../../src/index.js';
import { actionFor, Inbox, type InboxOutcome } from '../../src/messaging/consumer.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { createTestSchema, type TestSchema } from '../postgres/support.js';
import { requireService } from '../support/services.js';
import { faulty } from '../unit/faulty-store.js';
import { until } from './support/pg.js';

// The inbox answers `processed` (ack) only once the outcome is stored; a store that fails or hangs gives
// `failed` (redeliver) within `storeTimeoutMs`, on every store call it makes, including the transactional
// mode's runs counter.

interface Message {
  readonly id: string;
}

/** Settles with the outcome, or rejects once `ms` passed: a hung `handle` must fail the test, not stall it. */
const within = <T>(ms: number, work: Promise<T>): Promise<T> =>
  Promise.race([
    work,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms),
    ),
  ]);

describe('the outcome is stored before the inbox says processed', () => {
  it('complete fails: failed (retry), then the redelivery runs again and is processed', async () => {
    const store = faulty(new MemoryStore());
    let runs = 0;
    const inbox = new Inbox<Message>(() => ++runs, {
      store,
      messageId: (m) => m.id,
      leaseMs: 50,
      breaker: false,
    });
    store.fail.add('complete');
    const failed = await inbox.handle({ id: 'm' });
    expect(failed).toMatchObject({ kind: 'failed', attempt: 1 });
    expect(String((failed as { error: unknown }).error)).toContain('injected complete failure');
    expect(actionFor(failed)).toBe('retry');

    store.fail.delete('complete');
    // The failed run's claim holds until its lease ends; then the redelivery takes it over.
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await inbox.handle({ id: 'm' })).toMatchObject({ kind: 'processed', result: 2, attempt: 2 });
    expect(await inbox.handle({ id: 'm' })).toEqual({ kind: 'duplicate', result: 2 });
    expect(runs).toBe(2);
  });

  it('complete hangs: failed (retry) within the store timeout and its retries, never processed', async () => {
    const store = faulty(new MemoryStore());
    const inbox = new Inbox<Message>(() => 'done', {
      store,
      messageId: (m) => m.id,
      storeTimeoutMs: 100,
      breaker: false,
    });
    store.hang.add('complete');
    const started = Date.now();
    // complete is the one call the engine retries (three times, 25 + 100 + 400 ms apart), each bounded.
    const outcome = await within(3_000, inbox.handle({ id: 'h' }));
    expect(Date.now() - started).toBeLessThan(4 * 100 + 525 + 500);
    expect(outcome).toMatchObject({ kind: 'failed' });
    expect(String((outcome as { error: unknown }).error)).toMatch(/complete timed out after 100 ms/);
    expect(actionFor(outcome)).toBe('retry');
    expect(store.calls.complete).toBe(4);
  });
});

describe('transactional mode: the runs counter is bounded too', () => {
  let db: TestSchema;
  let store: PostgresStore;

  beforeAll(async () => {
    await requireService('postgres');
    db = await createTestSchema('msg_runs', 4);
    store = new PostgresStore({ pool: db.pool, schema: db.schema });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('a hung store on the runs counter gives failed within storeTimeoutMs; its late claim is given back, so the redelivery runs', async () => {
    const events: OncelyEvent[] = [];
    let runs = 0;
    const inbox = new Inbox<Message>(() => ++runs, {
      store: store.transactional(),
      messageId: (m) => m.id,
      storeTimeoutMs: 300,
      onEvent: (event) => events.push(event),
    });
    // Another session holds the records table: every statement on it waits (a real hang, nothing faked).
    const blocker = await db.pool.connect();
    let outcome: InboxOutcome<unknown>;
    try {
      await blocker.query('BEGIN');
      await blocker.query(`LOCK TABLE ${db.table('oncely_keys')} IN ACCESS EXCLUSIVE MODE`);
      const started = Date.now();
      outcome = await within(3_000, inbox.handle({ id: 'r' }, { redelivered: true }));
      expect(Date.now() - started).toBeLessThan(300 + 500);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    expect(outcome).toMatchObject({ kind: 'failed', attempt: undefined });
    expect(String((outcome as { error: unknown }).error)).toMatch(/begin timed out after 300 ms/);
    expect(actionFor(outcome)).toBe('retry');
    expect(events).toContainEqual(expect.objectContaining({ type: 'storeError', operation: 'begin' }));
    expect(runs).toBe(0);

    // The statement that waited on the lock now claims the counter, after its caller gave up: it is released,
    // so the redelivery is not `busy` for a whole lease (30 s here). The counter is the table's only row.
    await until(async () => {
      const { rows } = await db.pool.query(`SELECT state FROM ${db.table('oncely_keys')}`);
      return rows.length === 1 && rows[0].state === 'released';
    }, 5_000);
    const next = await within(5_000, inbox.handle({ id: 'r' }, { redelivered: true }));
    expect(next).toMatchObject({ kind: 'processed', result: 1 });
    expect(runs).toBe(1);
  });
});
