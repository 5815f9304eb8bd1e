import { randomBytes } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { EventLog } from '../../../src/dashboard/index.js';
import { migrate as migrateOutbox, Outbox, OutboxRelay } from '../../../src/messaging/outbox/index.js';
import type { Publisher } from '../../../src/messaging/publisher.js';
import { PostgresStore } from '../../../src/stores/postgres/index.js';
import { RedisStore } from '../../../src/stores/redis/index.js';
import { inTransaction, testPool, until } from '../../messaging/support/pg.js';
import { services } from '../../support/services.js';

export { testPool, until };

const tag = () => `${process.pid}_${randomBytes(3).toString('hex')}`;

/** A schema of this run's own with the keys table, the outbox and the event log; `drop()` removes it. */
export async function postgresEnv(pool: pg.Pool) {
  const schema = `oncely_dash_${tag()}`;
  const store = new PostgresStore({ pool, schema, listen: false });
  await store.migrate();
  await migrateOutbox(pool, { schema });
  const log = new EventLog({ source: { postgres: pool, schema } });
  await log.migrate();
  return {
    schema,
    store,
    log,
    drop: async () => {
      await log.close().catch(() => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

/** A prefix of this run's own on the machine's Redis; `drop()` deletes every key under it. */
export async function redisEnv() {
  const client = new Redis(services.redis.url, { maxRetriesPerRequest: 1 });
  const prefix = `oncely-dash-${tag()}`;
  const store = new RedisStore({ client, prefix });
  const log = new EventLog({ source: { redis: client, prefix } });
  return {
    client,
    prefix,
    store,
    log,
    drop: async () => {
      await log.close().catch(() => {});
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) await client.del(...keys);
      } while (cursor !== '0');
      await store.close();
      client.disconnect();
    },
  };
}

export interface SeededOutbox {
  /** Dead letters a failing broker left, with the error it gave. */
  readonly dead: readonly string[];
  readonly deadTopic: string;
  readonly error: string;
  /** Pending events per topic, in insert order. */
  readonly pending: Readonly<Record<string, readonly string[]>>;
}

/**
 * Dead letters made the real way (a relay whose broker refuses every publish, one attempt allowed), then events
 * left pending with no relay running, so the backlog holds still while the page is read.
 */
export async function seedOutbox(pool: pg.Pool, schema: string): Promise<SeededOutbox> {
  const deadTopic = 'payment.failed';
  const error = 'broker refused: stream payment.failed is closed';
  const writer = new Outbox({ schema });
  // The relay dead-letters a message only when another of its batch went through (the broker is up, so the
  // message is at fault): one 'audit' event in the same batch is published.
  const written = await inTransaction(pool, (tx) =>
    writer.addMany(tx, [
      { topic: deadTopic, key: 'pay-1', payload: { id: 'pay-1' } },
      { topic: 'audit', key: 'audit-1', payload: { id: 'audit-1' } },
      { topic: deadTopic, key: 'pay-2', payload: { id: 'pay-2' } },
    ]),
  );
  const dead = [written[0]!, written[2]!];
  const refusing: Publisher = {
    name: 'refusing',
    delivery: 'at-least-once',
    publish: async (message) => {
      if (message.topic === deadTopic) throw new Error(error);
    },
  };
  const relay = new OutboxRelay({
    pool,
    schema,
    publisher: refusing,
    maxAttempts: 1,
    minPollMs: 10,
    listen: false,
  });
  await relay.start();
  await until(async () => {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM "${schema}".oncely_outbox WHERE state = 2`,
    );
    return rows[0].n === 2;
  });
  await relay.stop({ timeoutMs: 2_000 });
  const pending: Record<string, string[]> = {};
  for (const [topic, n] of [
    ['orders', 3],
    ['payments', 2],
  ] as const) {
    pending[topic] = await inTransaction(pool, (tx) =>
      writer.addMany(
        tx,
        Array.from({ length: n }, (_, i) => ({
          topic,
          key: `${topic}-${i}`,
          payload: { personal: 'PAYLOAD-SECRET' },
        })),
      ),
    );
  }
  return { dead, deadTopic, error, pending };
}

/** Serves a node:http handler on 127.0.0.1 at a free port. */
export async function serve(handler: RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
