// Consumer throughput with the inbox on Redis, on PostgreSQL and on PostgreSQL in transactional mode, against
// the same handler without an inbox. The handler writes one row (the effect) into PostgreSQL; messages are fed
// straight to `inbox.handle` (no broker in the loop), so the numbers are the inbox's own cost.
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Store } from '../../src/core/store.js';
import { Inbox, type InboxContext } from '../../src/messaging/consumer.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { DATABASE_URL, tag } from './fixtures.js';

export interface ConsumerScenario {
  readonly name: string;
  /** Handles one message id; resolves once the outcome is stored (or, without an inbox, once the effect is written). */
  readonly handle: (id: string) => Promise<void>;
  /** Round trips to the inbox's store per new message (from the statements each path sends; see the docs). */
  readonly storeTrips: string;
}

export async function consumerFixtures(poolSize: number) {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: poolSize });
  pool.on('error', () => {});
  const schema = `oncely_bench_inbox_${tag}`;
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(`CREATE TABLE "${schema}".effects (id text NOT NULL, amount integer NOT NULL)`);
  const postgres = new PostgresStore({ pool, schema });
  await postgres.migrate();
  const redis = new Redis({ port: 6379, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  await new Promise((resolve) => redis.once('ready', resolve));
  const effect = `INSERT INTO "${schema}".effects (id, amount) VALUES ($1, 1250)`;

  const inboxOver = (store: Store, transactional: boolean) => {
    const inbox = new Inbox<string>(
      async (id: string, context: InboxContext) => {
        await (transactional ? transactionOf(context) : pool).query(effect, [id]);
      },
      { store, messageId: (id) => id, scope: `bench-${tag}`, breaker: false },
    );
    return async (id: string) => {
      // As the broker helpers call it for a first delivery.
      const outcome = await inbox.handle(id, { redelivered: false });
      if (outcome.kind !== 'processed') throw new Error(`unexpected outcome ${outcome.kind}`);
    };
  };

  const scenarios: ConsumerScenario[] = [
    {
      name: 'no inbox: the handler alone (one INSERT)',
      handle: async (id) => {
        await pool.query(effect, [id]);
      },
      storeTrips: '—',
    },
    {
      name: 'inbox on Redis',
      handle: inboxOver(new RedisStore({ client: redis, prefix: `oncely-bench-inbox-${tag}` }), false),
      storeTrips: '2 (begin, complete)',
    },
    {
      name: 'inbox on PostgreSQL (record outside the handler)',
      handle: inboxOver(postgres, false),
      storeTrips: '2 (begin, complete)',
    },
    {
      name: 'inbox on PostgreSQL, transactional (record + effect in one transaction)',
      handle: inboxOver(postgres.transactional(), true),
      storeTrips:
        '3 around the INSERT (BEGIN + claim, complete, COMMIT); 2 more on a redelivery (run counter)',
    },
  ];
  return {
    scenarios,
    async close() {
      const keys = await redis.keys(`oncely-bench-inbox-${tag}*`);
      for (let i = 0; i < keys.length; i += 1_000) await redis.del(...keys.slice(i, i + 1_000));
      redis.disconnect();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** `total` new messages through `scenario`, `concurrency` at a time; messages per second. */
export async function consumerRound(
  scenario: ConsumerScenario,
  total: number,
  concurrency: number,
  label: string,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let n = next++; n < total; n = next++) await scenario.handle(`${label}-${n}`);
    }),
  );
  return (total / (performance.now() - started)) * 1000;
}
