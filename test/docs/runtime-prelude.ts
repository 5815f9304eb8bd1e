import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { MemoryStore } from '../../src/index.js';
import type { Placeholders } from './placeholders.js';

/**
 * Real values for the documentation's placeholders, installed as globals before a `run` block is imported (see
 * run-snippet.ts). Connections go to the local services: PostgreSQL at DATABASE_URL (the docs test points it at a
 * database of its own, which has the `payments`, `orders` and `accounts` tables the blocks write to), Redis at
 * REDIS_URL. The reader's business code is stood in for by the least that behaves like it.
 *
 * `MyStore` stays a type only: there is no third-party store to run, so the conformance block is type-checked.
 */
const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (databaseUrl === undefined || redisUrl === undefined)
  throw new Error(
    'runtime-prelude: DATABASE_URL and REDIS_URL must be set (test/docs/snippets.test.ts sets them)',
  );

const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
// An open transaction, as a block that says "inside your transaction" expects; never committed.
const tx = await pool.connect();
await tx.query('BEGIN');

// Unique per run, so records and rows of one run never meet another's.
const id = randomUUID();
const order = { id: `order-${id}`, amount: 1999 };

const values = {
  payments: {
    charge: async (order, { signal }) => {
      signal.throwIfAborted();
      return { id: `pay-${randomUUID()}`, amount: order.amount };
    },
  },
  charge: async (input) => ({
    id: `pay-${randomUUID()}`,
    amount: Number((input as { amount?: unknown }).amount),
  }),
  buildReport: async () => ({ rows: 1 }),
  applyPayment: async () => {},
  ledger: { credit: async () => {} },
  order,
  payment: { id: `pay-${id}`, amount: order.amount },
  message: { eventId: `event-${id}`, accountId: `account-${id}`, cents: 500 },
  log: { debug: () => {} },
  clientKey: `key-${id}`,
  rawBody: Buffer.from(JSON.stringify(order)),
  body: Buffer.from(JSON.stringify({ refund: id })),
  pool,
  // lazyConnect: connects on its first command, so a block that never uses it opens nothing.
  redis: new Redis(redisUrl, { lazyConnect: true }),
  store: new MemoryStore(),
  publisher: { name: 'docs', delivery: 'at-least-once', publish: async () => {} },
  tx,
} satisfies Omit<Placeholders, 'MyStore'>;

Object.assign(globalThis, values);
