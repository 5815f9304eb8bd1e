import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Inbox, type InboxOutcome } from '../../src/messaging/consumer.js';
import { Outbox } from '../../src/messaging/outbox/index.js';
import { connectionOf, MySqlStore } from '../../src/stores/mysql/index.js';
import {
  countOf,
  createTestOutbox,
  DRIVERS,
  query,
  type TestOutbox,
  until,
} from '../messaging/mysql/support.js';
import { startWorker, type Worker } from '../messaging/support/children.js';
import { dropTable, uniqueTable } from './support.js';

// Child processes start through tsx: on a loaded 2-core machine each start can take seconds.
vi.setConfig({ testTimeout: 120_000 });

// The inbox's transactional mode on MySqlStore, as it is (store.transactional()): the message's record, the
// handler's effect and an outbox event written through `connectionOf(context)` commit together or not at all.

interface Credit {
  readonly id: string;
  readonly amount: number;
}

describe.each(DRIVERS)('%s', (driver) => {
  let box: TestOutbox;
  let table: string;
  const workers: Worker[] = [];

  beforeAll(async () => {
    box = await createTestOutbox(`inbox${driver.slice(0, 2)}`, driver);
    table = uniqueTable('inbox');
    await new MySqlStore({ pool: box.pool, table }).migrate();
    await query(
      box.pool,
      `CREATE TABLE \`${box.schema}\`.effects (id VARCHAR(64) NOT NULL, amount INT NOT NULL, pid INT NOT NULL)`,
    );
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    if (box !== undefined) await dropTable(box.pool, table);
    await box?.drop();
  });
  beforeEach(() => query(box.pool, `DELETE FROM \`${box.schema}\`.effects`));

  const effects = () => countOf(box.pool, `\`${box.schema}\`.effects`);
  const events = (id: string) =>
    countOf(box.pool, box.table, `state = 0 AND topic = 'credited' AND \`key\` = '${id}'`);

  /** An inbox whose handler writes the effect and an outbox event through the inbox's transaction. */
  const inboxFor = (options: { fail?: () => boolean; runs?: string[] } = {}) => {
    const outbox = new Outbox({ schema: box.schema });
    return new Inbox(
      async (message: Credit, context) => {
        options.runs?.push(message.id);
        const connection = connectionOf(context);
        await connection.query(`INSERT INTO \`${box.schema}\`.effects (id, amount, pid) VALUES (?, ?, ?)`, [
          message.id,
          message.amount,
          process.pid,
        ]);
        await outbox.add(connection, { topic: 'credited', key: message.id, payload: message });
        if (options.fail?.()) throw new Error('downstream check failed');
        return message.amount;
      },
      {
        store: new MySqlStore({ pool: box.pool, table }).transactional(),
        messageId: (message) => message.id,
        leaseMs: 1_000,
      },
    );
  };

  it('a handler that throws after writing leaves no effect, no event and no record; the redelivery runs once, a duplicate not at all', async () => {
    const runs: string[] = [];
    let failing = true;
    const inbox = inboxFor({ runs, fail: () => failing });
    const message = { id: `m-${driver}-throw`, amount: 7 };
    expect(await inbox.handle(message, { redelivered: false })).toMatchObject({ kind: 'failed' });
    expect({ effects: await effects(), events: await events(message.id) }).toEqual({ effects: 0, events: 0 });

    failing = false;
    expect(await inbox.handle(message, { redelivered: true })).toMatchObject({
      kind: 'processed',
      result: 7,
    });
    expect(await inbox.handle(message, { redelivered: true })).toMatchObject({
      kind: 'duplicate',
      result: 7,
    });
    expect(runs).toEqual([message.id, message.id]);
    expect({ effects: await effects(), events: await events(message.id) }).toEqual({ effects: 1, events: 1 });
  });

  it('a consumer SIGKILLed with its effect and event written in the open transaction: neither stays, the redelivered message runs once', async () => {
    const message = { id: `m-${driver}-kill`, amount: 11 };
    const victim = startWorker('../mysql/workers/inbox', {
      driver,
      table,
      schema: box.schema,
      leaseMs: 1_000,
      message,
    });
    workers.push(victim);
    await victim.waitFor((e) => e.type === 'stalled', 60_000);
    // Written, not committed: invisible to anyone else.
    expect(await effects()).toBe(0);
    await victim.kill('SIGKILL');

    // The server rolls the dead connection's transaction back; the redelivery waits out the run's lease (busy),
    // then runs, once.
    const runs: string[] = [];
    const inbox = inboxFor({ runs });
    const outcomes: InboxOutcome<unknown>[] = [];
    await until(
      async () => {
        const outcome = await inbox.handle(message, { redelivered: true });
        outcomes.push(outcome);
        return outcome.kind === 'processed';
      },
      30_000,
      100,
    );
    expect(outcomes.every((o) => o.kind === 'busy' || o.kind === 'processed')).toBe(true);
    expect(await inbox.handle(message, { redelivered: true })).toMatchObject({ kind: 'duplicate' });
    expect(runs).toEqual([message.id]);
    const [row] = await query(
      box.pool,
      `SELECT COUNT(*) AS n, MAX(pid) AS pid FROM \`${box.schema}\`.effects`,
    );
    expect({ n: Number(row!.n), pid: Number(row!.pid) }).toEqual({ n: 1, pid: process.pid });
    expect(await events(message.id)).toBe(1);
  });
});
