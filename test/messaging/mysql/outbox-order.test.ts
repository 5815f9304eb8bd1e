import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox, OutboxRelay } from '../../../src/messaging/outbox/index.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import {
  connectionOf,
  createTestOutbox,
  type DriverName,
  type Isolation,
  type MySqlConnection,
  run,
  type TestOutbox,
} from './support.js';

// Per-key order is commit order, on MySQL / MariaDB as on PostgreSQL. Transactions on one key overlap in every way
// here, the one that started first often committing last; each key's published order is compared with the order in
// which its transactions actually committed. The relay runs once all are written, so it sees both rows of every key
// at once and only their seqs can order them (test/messaging/mysql/outbox-relay.test.ts and the Redis Streams test
// publish while writers write).

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Writer = 'early' | 'late';

/** The writes that finished within `ms` (the others wait on a key's lock). */
async function finishedWithin(writes: Map<Writer, Promise<unknown>>, ms: number): Promise<Writer[]> {
  const done: Writer[] = [];
  for (const [name, write] of writes) void write.then(() => done.push(name));
  await Promise.race([Promise.all(writes.values()), sleep(ms)]);
  return [...done];
}

const setups: [DriverName, Isolation][] = [
  ['mysql2', 'REPEATABLE READ'],
  ['mariadb', 'READ COMMITTED'],
];

describe.each(setups)('%s, %s', (driver, isolation) => {
  let box: TestOutbox;
  beforeAll(async () => {
    box = await createTestOutbox(`order${driver.slice(0, 2)}`, driver, { isolation, size: 8 });
  });
  afterAll(() => box?.drop());

  it('two overlapping transactions on one key, the one that started first committing last (random interleavings): each key published in commit order', async () => {
    const outbox = new Outbox({ schema: box.schema });
    const rounds = 30;
    const publisher = new RecordingPublisher();
    const commitOrder = new Map<string, Writer[]>();
    let startedFirstCommittedLast = 0;
    let events = 0;
    for (let round = 0; round < rounds; round++) {
      const key = `acct-${round}`;
      const early = await connectionOf(box.pool);
      const late = await connectionOf(box.pool);
      try {
        // Both start and read before either writes, `early` first.
        await run(early, 'START TRANSACTION WITH CONSISTENT SNAPSHOT');
        await run(late, 'START TRANSACTION WITH CONSISTENT SNAPSHOT');
        const connections: Record<Writer, MySqlConnection> = { early, late };
        const order = Math.random() < 0.7 ? (['late', 'early'] as const) : (['early', 'late'] as const);
        const writes = new Map<Writer, Promise<unknown>>();
        for (const name of order) {
          const event = { topic: 't', key, payload: { key, by: name } };
          // Sometimes with an unordered event and another key in the same call.
          const many = Math.random() < 0.3;
          const write = many
            ? outbox.addMany(connections[name], [
                { topic: 't', payload: { key: 'none', by: name } },
                event,
                { topic: 't', key: `other-${round}-${name}`, payload: { key: 'other', by: name } },
              ])
            : outbox.add(connections[name], event);
          // Awaited below; until then a rejection must not count as unhandled.
          write.catch(() => {});
          writes.set(name, write);
          events += many ? 3 : 1;
          await sleep(Math.random() * 3);
        }
        // A write that is done may commit; prefer committing `late` first.
        const done = await finishedWithin(writes, 40);
        const first: Writer = done.includes('late')
          ? 'late'
          : (done[0] ?? (await Promise.race([...writes].map(([name, write]) => write.then(() => name)))));
        const second: Writer = first === 'late' ? 'early' : 'late';
        await writes.get(first);
        await run(connections[first], 'COMMIT');
        await writes.get(second);
        await run(connections[second], 'COMMIT');
        if (first === 'late') startedFirstCommittedLast++;
        commitOrder.set(key, [first, second]);
      } finally {
        early.destroy();
        late.destroy();
      }
    }
    const relay = new OutboxRelay({ pool: box.pool, publisher, schema: box.schema });
    while ((await relay.runOnce()).claimed > 0) {}
    // The interleavings the test is about did happen.
    expect(startedFirstCommittedLast).toBeGreaterThan(rounds / 3);
    expect(publisher.published).toHaveLength(events);
    for (const [key, committed] of commitOrder) {
      const published = publisher.payloads().flatMap((p) => {
        const { key: k, by } = p as { key: string; by: Writer };
        return k === key ? [by] : [];
      });
      expect({ key, published }).toEqual({ key, published: committed });
    }
  });
});
