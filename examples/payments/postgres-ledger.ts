import { randomUUID } from 'node:crypto';
import { Outbox } from 'oncely/outbox';
import type pg from 'pg';
import type { Payment, PaymentRequest } from './ledger.js';

/**
 * The demo's business side on PostgreSQL: a payment is a row in `demo_payments`, and its `payment.created` event
 * is an outbox row written in the SAME transaction as the payment and the idempotency key's record (transactional
 * mode). Either all three commit, or none does.
 */
export class PostgresLedger {
  readonly #pool: pg.Pool;
  readonly #payments: string;
  readonly #outbox: Outbox;

  /** `schema` holds `demo_payments` and the outbox (the `oncely demo` CLI keeps both in `oncely_demo`). */
  constructor(pool: pg.Pool, schema = 'public') {
    // The Outbox validates the name (plain identifiers only), so quoting it needs no escaping.
    this.#outbox = new Outbox({ schema });
    this.#pool = pool;
    this.#payments = `"${schema}".demo_payments`;
  }

  async migrate(): Promise<void> {
    await this.#pool.query(`CREATE TABLE IF NOT EXISTS ${this.#payments} (
      id text PRIMARY KEY,
      idempotency_key text NOT NULL,
      amount bigint NOT NULL,
      currency text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await this.#pool.query(
      `CREATE INDEX IF NOT EXISTS demo_payments_key ON ${this.#payments} (idempotency_key)`,
    );
  }

  /** Charges inside the caller's transaction: the payment row and its event commit with the key's record. */
  async charge(
    transaction: pg.ClientBase,
    key: string,
    request: PaymentRequest,
    processingMs: number,
  ): Promise<Payment> {
    await new Promise((resolve) => setTimeout(resolve, processingMs));
    const payment: Payment = {
      id: `pay_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
      amount: request.amount,
      currency: request.currency,
      status: 'succeeded',
      createdAt: new Date().toISOString(),
    };
    await transaction.query(
      `INSERT INTO ${this.#payments} (id, idempotency_key, amount, currency) VALUES ($1, $2, $3, $4)`,
      [payment.id, key, payment.amount, payment.currency],
    );
    await this.#outbox.add(transaction, { topic: 'payment.created', key: payment.id, payload: payment });
    return payment;
  }

  /** Payments per idempotency key, counted from the table itself: the business truth the demo checks. */
  async executions(keys: readonly string[]): Promise<Map<string, number>> {
    const { rows } = await this.#pool.query<{ key: string; count: string }>(
      `SELECT idempotency_key AS key, count(*) AS count FROM ${this.#payments} WHERE idempotency_key = ANY($1) GROUP BY 1`,
      [keys],
    );
    return new Map(rows.map((row) => [row.key, Number(row.count)]));
  }
}
