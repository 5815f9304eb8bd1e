import type { Redis } from 'ioredis';
import type { Store } from 'oncely';
import type { Publisher } from 'oncely/outbox';
import type { Pool, PoolClient } from 'pg';

// The placeholders of the documentation's code blocks: the reader's own application (their payment provider,
// their order, their pg pool), which a block uses without defining it. One list, used twice: `prelude.ts`
// declares each as a global for the type-check, and `runtime-prelude.ts` gives each a real value for the blocks
// that run (`satisfies Placeholders`, so the two cannot drift apart).

/** An order of the reader's shop, as the examples charge it (amount in minor units). */
export type Order = { id: string; amount: number };

/** A payment as the reader's payment code returns it. */
export type Payment = { id: string; amount: number };

/** An event a payments service publishes and a ledger consumes. */
export type PaymentCreated = { eventId: string; accountId: string; cents: number };

export interface Placeholders {
  /** The reader's payment provider client. */
  payments: {
    charge(order: Order, options: { fencingToken: number; signal: AbortSignal }): Promise<Payment>;
  };
  /** The reader's charge step behind an HTTP route: the parsed request body and the claim's fencing token. */
  charge(input: unknown, fencingToken: number | undefined): Promise<Payment>;
  /** Slow work behind a long-running route. */
  buildReport(input: unknown, options?: { signal?: AbortSignal }): Promise<{ rows: number }>;
  /** A consumer's effect. */
  applyPayment(payment: unknown): Promise<void>;
  ledger: {
    credit(accountId: string, cents: number, fencing: { token: number; signal: AbortSignal }): Promise<void>;
  };
  order: Order;
  payment: Payment;
  /** A message as a consumer receives it. (Not `event`: the DOM lib already declares a global of that name.) */
  message: PaymentCreated;
  log: { debug(value: unknown): void };
  /** The raw request pieces of the low-level `Engine` example. */
  clientKey: string;
  rawBody: Uint8Array;
  body: Uint8Array;
  /** The reader's connections (oncely never dials): a pg pool, an ioredis client, any Store. */
  pool: Pool;
  redis: Redis;
  store: Store;
  /** A broker publisher for the outbox relay (NATS, RabbitMQ, Redis Streams, or the reader's own). */
  publisher: Publisher;
  /** An open transaction's client (after `BEGIN`). */
  tx: PoolClient;
  /** A third-party store under the conformance kit: type-check only, there is no such store to run. */
  MyStore: new (options: {
    clock: () => number;
  }) => Store;
}
