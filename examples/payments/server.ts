import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventHandler, Store } from 'oncely';
import { type IdempotencyContext, idempotency } from 'oncely/node';
import { type PostgresStore, transactionOf } from 'oncely/postgres';
import type pg from 'pg';
import { Ledger, type Payment, type PaymentRequest, readPaymentRequest } from './ledger.js';
import { PostgresLedger } from './postgres-ledger.js';

export interface PaymentsServerOptions {
  /** Where idempotency records live (memory, Redis or PostgreSQL). */
  readonly store: Store;
  /**
   * Run on PostgreSQL in transactional mode: `store` must be a `PostgresStore` on this pool; payments become rows
   * that commit together with the key's record and a `payment.created` outbox event.
   */
  readonly postgres?: {
    readonly pool: pg.Pool;
    /** Schema of `demo_payments` and of the outbox the events go to (the store's is set on the store). Default `public`. */
    readonly schema?: string;
  };
  readonly port?: number;
  readonly host?: string;
  /** How long a simulated charge takes. Default 50 ms. */
  readonly processingMs?: number;
  /** The engine's event hook (the demo's dashboard passes an EventLog's). */
  readonly onEvent?: EventHandler;
}

export interface PaymentsServer {
  readonly url: string;
  /** How many times each key's payment was executed: the number the demo checks is exactly 1. */
  executions(keys: readonly string[]): Promise<ReadonlyMap<string, number>>;
  close(): Promise<void>;
}

/**
 * The demo's payments service: `POST /payments` with an `Idempotency-Key` header and `{ amount, currency }`
 * creates a payment once per key (201). Retries replay the first answer byte for byte with
 * `Idempotent-Replayed: true`; a duplicate in flight gets 409 with `Retry-After`; the same key with another body
 * 422; no key 400 — all answered by `oncely/node`, which stores the response before the client sees it.
 * A body the service refuses (not JSON 415, empty or malformed 400, not a payment 422) is not stored: the client
 * fixes it and retries with the same key. Resolves once listening; rejects when it cannot (a port in use).
 */
export async function startPaymentsServer(options: PaymentsServerOptions): Promise<PaymentsServer> {
  const { store, postgres, port = 0, host = '127.0.0.1', processingMs = 50, onEvent } = options;
  const charge = await chargeFunction(store, postgres, processingMs);
  const idem = idempotency({
    // Transactional mode: the claim, the payment row, its event and the stored response share one transaction.
    store: postgres ? (store as PostgresStore).transactional() : store,
    leaseMs: 10_000,
    // The demo's clients are whoever holds a bearer token, or one anonymous client for curl without one: said
    // explicitly, as a service whose identity lives elsewhere should say it (see docs/http.md#scope).
    scope: (req) => req.headers.authorization ?? 'anonymous',
    ...(onEvent === undefined ? {} : { onEvent }),
  });

  const server = createServer(
    idem(async (req, res, { body, idempotency: claim }) => {
      if (req.method !== 'POST' || req.url !== '/payments' || claim === undefined || body === undefined) {
        return problem(res, 404, `no route ${req.method} ${req.url}; try POST /payments`);
      }
      const request = readPaymentRequest(req.headers['content-type'], body);
      if ('detail' in request) {
        // Nothing was charged, so the key must stay free: stored, this answer would be replayed to the corrected
        // retry (or, its body differing, turn it into 422 key-reused). Stripe does not save failed validation
        // either.
        claim.skipStorage();
        return problem(res, request.status, request.detail);
      }
      json(res, 201, await charge.run(claim, request));
    }),
  );
  await new Promise<void>((resolve, reject) => {
    // listen reports a busy port as an 'error' event; unheard, it would crash the process.
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    // An IPv6 literal needs brackets in a URL (http://[::1]:3000).
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    executions: charge.executions,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface Charger {
  run(claim: IdempotencyContext, request: PaymentRequest): Promise<Payment>;
  executions(keys: readonly string[]): Promise<ReadonlyMap<string, number>>;
}

async function chargeFunction(
  store: Store,
  postgres: PaymentsServerOptions['postgres'],
  processingMs: number,
): Promise<Charger> {
  if (postgres === undefined) {
    const ledger = new Ledger();
    return {
      run: (claim, request) => ledger.charge(claim.key, request, processingMs),
      executions: async () => ledger.executionsByKey,
    };
  }
  if (store.name !== 'postgres') throw new TypeError('postgres mode needs the PostgresStore as the store');
  const ledger = new PostgresLedger(postgres.pool, postgres.schema);
  await ledger.migrate();
  return {
    run: (claim, request) => ledger.charge(transactionOf(claim), claim.key, request, processingMs),
    executions: (keys) => ledger.executions(keys),
  };
}

function json(res: ServerResponse<IncomingMessage>, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

/** An RFC 9457 problem, like oncely's own answers; `about:blank` problems take the status phrase as title. */
function problem(res: ServerResponse<IncomingMessage>, status: number, detail: string): void {
  const body = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail };
  res.writeHead(status, { 'content-type': 'application/problem+json' }).end(JSON.stringify(body));
}
