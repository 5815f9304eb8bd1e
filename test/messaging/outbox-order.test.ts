import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Outbox, OutboxRelay, type OutboxRelayOptions } from '../../src/messaging/outbox/index.js';
import { requireService } from '../support/services.js';
import { freshOutbox, testPool, until } from './support/pg.js';
import { RecordingPublisher } from './support/recording-publisher.js';

// Per-key order is commit order. Transactions on one key overlap in every possible way here; the published order
// of each key is compared with the order in which its transactions actually committed.

let pool: pg.Pool;
let box: Awaited<ReturnType<typeof freshOutbox>>;
let outbox: Outbox;

beforeAll(async () => {
  await requireService('postgres');
  pool = testPool(6);
  box = await freshOutbox(pool, 'order');
  outbox = new Outbox({ schema: box.schema });
});

afterAll(async () => {
  await box?.drop();
  await pool?.end();
});

beforeEach(() => pool.query(`DELETE FROM ${box.table}`));

const relayFor = (publisher: RecordingPublisher, options: Partial<OutboxRelayOptions> = {}) =>
  new OutboxRelay({
    pool,
    publisher,
    schema: box.schema,
    listen: false,
    minPollMs: 2,
    maxPollMs: 20,
    ...options,
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Published `{ key, by }` payloads of one key, in publish order. */
const publishedBy = (publisher: RecordingPublisher, key: string) =>
  publisher.payloads().flatMap((p) => {
    const { key: k, by } = p as { key: string; by: string };
    return k === key ? [by] : [];
  });

type Writer = 'early' | 'late';

/** The writes that finished within `ms` (the others wait on a lock). */
async function finishedWithin(writes: Map<Writer, Promise<unknown>>, ms: number): Promise<Writer[]> {
  const done: Writer[] = [];
  for (const [name, write] of writes) void write.then(() => done.push(name));
  await Promise.race([Promise.all(writes.values()), sleep(ms)]);
  return [...done];
}

describe('per-key order is commit order', () => {
  it('two overlapping transactions on one key, the one that started first committing last (random interleavings): each key published in commit order', async () => {
    const rounds = 60;
    const publisher = new RecordingPublisher();
    const relay = relayFor(publisher);
    await relay.start();
    const commitOrder = new Map<string, Writer[]>();
    let startedFirstCommittedLast = 0;
    let events = 0;
    try {
      for (let round = 0; round < rounds; round++) {
        const key = `acct-${round}`;
        const early = await pool.connect();
        const late = await pool.connect();
        try {
          // Both take a transaction id before writing, `early` first: xid order is [early, late].
          await early.query('BEGIN');
          await early.query('SELECT pg_current_xact_id()');
          await late.query('BEGIN');
          await late.query('SELECT pg_current_xact_id()');
          const clients = { early, late };
          const order = Math.random() < 0.7 ? (['late', 'early'] as const) : (['early', 'late'] as const);
          const writes = new Map<Writer, Promise<unknown>>();
          for (const name of order) {
            const event = { topic: 't', key, payload: { key, by: name } };
            // Sometimes with an unordered event and another key in the same statement.
            const many = Math.random() < 0.3;
            const write = many
              ? outbox.addMany(clients[name], [
                  { topic: 't', payload: { key: 'none', by: name } },
                  event,
                  { topic: 't', key: `other-${round}-${name}`, payload: { key: 'other', by: name } },
                ])
              : outbox.add(clients[name], event);
            // Awaited below; until then a rejection must not count as unhandled.
            write.catch(() => {});
            writes.set(name, write);
            events += many ? 3 : 1;
            await sleep(Math.random() * 3);
          }
          // A write that is done may commit; prefer committing `late` first (the case xid order gets wrong).
          const done = await finishedWithin(writes, 40);
          const first: Writer = done.includes('late')
            ? 'late'
            : (done[0] ?? (await Promise.race([...writes].map(([name, write]) => write.then(() => name)))));
          const second: Writer = first === 'late' ? 'early' : 'late';
          await writes.get(first);
          await clients[first].query('COMMIT');
          await writes.get(second);
          await clients[second].query('COMMIT');
          if (first === 'late') startedFirstCommittedLast++;
          commitOrder.set(key, [first, second]);
        } finally {
          await early.query('ROLLBACK').catch(() => {});
          await late.query('ROLLBACK').catch(() => {});
          early.release();
          late.release();
        }
      }
      await until(() => publisher.published.length >= events);
    } finally {
      await relay.stop();
    }
    // The interleavings the test is about did happen.
    expect(startedFirstCommittedLast).toBeGreaterThan(rounds / 3);
    expect(publisher.published).toHaveLength(events);
    for (const [key, committed] of commitOrder) {
      expect({ key, published: publishedBy(publisher, key) }).toEqual({ key, published: committed });
    }
  });
});
