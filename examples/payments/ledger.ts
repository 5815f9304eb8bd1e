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

/** A request the service refuses before charging, with the status and detail of its problem answer. */
export interface RefusedRequest {
  readonly status: 400 | 415 | 422;
  readonly detail: string;
}

/**
 * Reads the body of `POST /payments`: 415 when it is not declared JSON, 400 when it is empty or does not parse,
 * 422 when it parses but is not a payment. (oncely/node answers 400 itself for a body declared JSON that does
 * not parse, before any record exists; the check here keeps the service safe without it.)
 */
export function readPaymentRequest(
  contentType: string | undefined,
  body: Buffer,
): PaymentRequest | RefusedRequest {
  if (!isJson(contentType)) {
    return { status: 415, detail: 'send the payment as JSON, with Content-Type: application/json' };
  }
  if (body.byteLength === 0) {
    return {
      status: 400,
      detail: 'the body is empty; send a JSON object like {"amount": 1999, "currency": "EUR"}',
    };
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(body.toString('utf8'));
  } catch {
    return { status: 400, detail: 'the body is not valid JSON' };
  }
  const request = parsePaymentRequest(decoded);
  return typeof request === 'string' ? { status: 422, detail: request } : request;
}

/** `application/json`, or any `application/…+json`, with or without parameters such as charset. */
function isJson(contentType: string | undefined): boolean {
  return /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType ?? '');
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
