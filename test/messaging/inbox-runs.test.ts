import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Inbox } from '../../src/messaging/consumer.js';
import { runsKeyOf } from '../../src/messaging/inbox-runs.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { createTestSchema, type TestSchema } from '../postgres/support.js';
import { requireService } from '../support/services.js';

// Transactional mode counts runs on a second record (src/messaging/inbox-runs.ts), claimed through an engine of
// its own. These hold what that record must do: it is gone once the message is finished, released with its count
// when a run failed, and its lease is never renewed past one lease (a hung handler counts as a crash would).

interface Message {
  readonly id: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the record is gone within a second (a 1 ms retention may still read live in its own millisecond). */
async function goneSoon(store: PostgresStore, key: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if ((await store.get(key)) === undefined) return true;
    await sleep(10);
  }
  return false;
}

describe('transactional mode: the runs record', () => {
  let db: TestSchema;
  let store: PostgresStore;

  beforeAll(async () => {
    await requireService('postgres');
    db = await createTestSchema('msg_runsrec', 4);
    store = new PostgresStore({ pool: db.pool, schema: db.schema });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('is released with its count after a failed run, and gone once the message is processed', async () => {
    let runs = 0;
    const inbox = new Inbox<Message>(
      () => {
        runs += 1;
        if (runs === 1) throw new Error('first run fails');
        return 'done';
      },
      { store: store.transactional(), messageId: (m) => m.id },
    );
    const runsKey = runsKeyOf(inbox.keyOf('a'));
    expect(await inbox.handle({ id: 'a' }, { redelivered: true })).toMatchObject({ kind: 'failed' });
    expect(await store.get(runsKey)).toMatchObject({ state: 'released', attempt: 1 });
    // The second run is counted on the record (attempt 2), plus one for the redelivery.
    expect(await inbox.handle({ id: 'a' }, { redelivered: true })).toMatchObject({
      kind: 'processed',
      attempt: 3,
    });
    // Completed with a retention of 1 ms (the store's clock, whole milliseconds): gone within a few.
    expect(await goneSoon(store, runsKey)).toBe(true);
  });

  it('is not renewed past one lease: a redelivery while the handler hangs takes it over and runs', async () => {
    const leaseMs = 300;
    let unblock = () => {};
    const hung = new Promise<void>((resolve) => {
      unblock = resolve;
    });
    let runs = 0;
    const handler = async () => {
      runs += 1;
      if (runs === 1) await hung;
      return runs;
    };
    const options = { store: store.transactional(), messageId: (m: Message) => m.id, leaseMs };
    // Two consumers (a redelivered message runs alone in its own process, so the second is another process).
    const inbox = new Inbox<Message>(handler, options);
    const other = new Inbox<Message>(handler, options);
    const first = inbox.handle({ id: 'h' }, { redelivered: true });
    // Past the lease by far: the first run's transaction was rolled back at its end, and the runs record's lease
    // ended with it. A renewed record would answer busy here, whatever the wait.
    await sleep(leaseMs + 500);
    const second = await other.handle({ id: 'h' }, { redelivered: true });
    unblock();
    expect(second).toMatchObject({ kind: 'processed', result: 2, attempt: 3 });
    expect(await first).toMatchObject({ kind: 'failed' });
    expect(runs).toBe(2);
  });
});
