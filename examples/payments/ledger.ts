import { randomUUID } from 'node:crypto';

export interface PaymentRequest {
  readonly amount: number;
  readonly currency: string;
}

export interface Payment extends PaymentRequest {
  readonly id: string;
  readonly status: 'succeeded';
  readonly createdAt: string;
}

/**
 * The business side of the demo: "charging" a card records a payment. Every execution is counted per
 * idempotency key, so the demo can prove that duplicates never charged twice.
 */
export class Ledger {
  readonly payments = new Map<string, Payment>();
  readonly executionsByKey = new Map<string, number>();

  async charge(key: string, request: PaymentRequest, processingMs: number): Promise<Payment> {
    this.executionsByKey.set(key, (this.executionsByKey.get(key) ?? 0) + 1);
    // A card network call takes a while: long enough for duplicates to arrive while the first is in flight.
    await new Promise((resolve) => setTimeout(resolve, processingMs));
    const payment: Payment = {
      id: `pay_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
      amount: request.amount,
      currency: request.currency,
      status: 'succeeded',
      createdAt: new Date().toISOString(),
    };
    this.payments.set(payment.id, payment);
    return payment;
  }
}

/** Checks a decoded JSON body; returns an error message for the client, or the request. */
export function parsePaymentRequest(body: unknown): PaymentRequest | string {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return 'the body must be a JSON object';
  const { amount, currency } = body as Record<string, unknown>;
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount <= 0) {
    return 'amount must be a positive whole number of minor units (cents)';
  }
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))
    return 'currency must be an ISO 4217 code like "EUR"';
  return { amount, currency };
}
