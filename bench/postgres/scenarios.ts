import type pg from 'pg';
import { idempotent } from '../../src/index.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';

export interface Scenario {
  readonly name: string;
  /** One request; `id` is unique per call in the whole run. */
  readonly request: (id: string) => Promise<unknown>;
}

interface Payment {
  readonly order: string;
  readonly cents: number;
}

const INSERT = (payments: string) => `INSERT INTO ${payments} (order_id, cents) VALUES ($1, $2) RETURNING id`;
const REPLAY_KEYS = 1_000;

/**
 * The payments handler four ways: without oncely (the baseline: BEGIN, INSERT, COMMIT), in transactional mode
 * (default options, no NOTIFY), in transactional mode with NOTIFY at commit, with the plain store (its record
 * written outside the business transaction), and a transactional replay. Every variant writes the same row.
 */
export async function scenarios(pool: pg.Pool, schema: string, payments: string): Promise<Scenario[]> {
  const insert = INSERT(payments);
  const store = new PostgresStore({ pool, schema, listen: false });
  const inTransaction = async (payment: Payment, context: Parameters<typeof transactionOf>[0]) => {
    const { rows } = await transactionOf(context).query(insert, [payment.order, payment.cents]);
    return { payment: rows[0].id as string, cents: payment.cents };
  };
  const ownTransaction = async (payment: Payment) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(insert, [payment.order, payment.cents]);
      await client.query('COMMIT');
      return { payment: rows[0].id as string, cents: payment.cents };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };
  const key = (payment: Payment) => payment.order;
  const transactional = idempotent(inTransaction, { store: store.transactional(), scope: 'pay', key });
  const notifying = store.transactional({ notify: true });
  const transactionalNotify = idempotent(inTransaction, { store: notifying, scope: 'pay', key });
  const plain = idempotent(ownTransaction, { store, scope: 'pay', key });
  for (let i = 0; i < REPLAY_KEYS; i++) await transactional({ order: `replay-${i}`, cents: 100 });
  let replays = 0;
  return [
    {
      name: 'without oncely: BEGIN, INSERT, COMMIT',
      request: (id) => ownTransaction({ order: id, cents: 100 }),
    },
    { name: 'oncely transactional mode', request: (id) => transactional({ order: id, cents: 100 }) },
    {
      name: 'oncely transactional mode, `notify: true`',
      request: (id) => transactionalNotify({ order: id, cents: 100 }),
    },
    {
      name: 'oncely plain store (record outside the transaction)',
      request: (id) => plain({ order: id, cents: 100 }),
    },
    {
      name: 'oncely transactional mode, replay',
      request: async () => {
        const result = await transactional.execute({
          order: `replay-${replays++ % REPLAY_KEYS}`,
          cents: 100,
        });
        if (!result.replayed) throw new Error('expected a replay');
      },
    },
  ];
}

/**
 * Runs `request` from `concurrency` loops for `durationMs` (and, given `until`, until it settles too); returns
 * requests/s, latency quantiles in ms, and the CPU µs per request of this process and of the server backends.
 */
export async function runRound(
  scenario: Scenario,
  concurrency: number,
  durationMs: number,
  prefix: string,
  serverCpu: () => number,
  until?: Promise<unknown>,
) {
  const latencies: number[] = [];
  const deadline = performance.now() + durationMs;
  let settled = until === undefined;
  void until?.finally(() => {
    settled = true;
  });
  const going = () => performance.now() < deadline || !settled;
  const cpuBefore = process.cpuUsage();
  const serverBefore = serverCpu();
  const started = performance.now();
  let serial = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (going()) {
        const at = performance.now();
        await scenario.request(`${prefix}-${serial++}`);
        latencies.push(performance.now() - at);
      }
    }),
  );
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const requests = latencies.length;
  latencies.sort((a, b) => a - b);
  const quantile = (q: number) => latencies[Math.min(requests - 1, Math.floor(q * requests))] ?? 0;
  return {
    perSec: (requests / elapsed) * 1_000,
    p50: quantile(0.5),
    p99: quantile(0.99),
    max: latencies[requests - 1] ?? 0,
    clientCpuUs: (cpu.user + cpu.system) / requests,
    serverCpuUs: (serverCpu() - serverBefore) / requests,
  };
}
