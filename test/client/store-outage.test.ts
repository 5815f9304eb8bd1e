import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaymentsServer, startPaymentsServer } from '../../examples/payments/server.js';
import { createClient, type RetryEvent } from '../../src/client/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { useDisposableRedis } from '../redis/support/disposable.js';

// The demo payments service on a Redis store of its own; the test stops that redis-server mid-call and starts it
// again. The service fails closed (503 store-unavailable, Retry-After: 1) while Redis is down; the client backs
// off and gets the payment once Redis is back. Effects are counted by the service's ledger.

const post = {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ amount: 1999, currency: 'EUR' }),
};

// The store's client is what docs/stores/redis.md recommends (fail fast, no offline queue), reconnecting every 100 ms.
const redis = useDisposableRedis({ reconnectMs: 100 });
let server: PaymentsServer;

beforeAll(async () => {
  server = await startPaymentsServer({ store: new RedisStore({ client: redis.client }), processingMs: 20 });
});

afterAll(async () => {
  await server?.close();
});

describe('a store outage', () => {
  it('503 while Redis is down, backoff honouring Retry-After, then success once it is back; one charge', async () => {
    const url = `${server.url}/payments`;
    const warm = await createClient().fetch(url, post);
    expect(warm.response.status).toBe(201);

    await redis.server.kill();
    const events: RetryEvent[] = [];
    let restarted: Promise<void> | undefined;
    const client = createClient({
      baseDelayMs: 50,
      timeoutMs: 30_000,
      onRetry: (event) => {
        events.push(event);
        // Back after the client has been told "unavailable" twice.
        if (events.length === 2) restarted = redis.server.restart();
      },
    });
    const result = await client.fetch(url, post);
    await restarted;

    expect(result.response.status).toBe(201);
    expect(result.replayed).toBe(false);
    expect(result.attempts).toBeGreaterThanOrEqual(3);
    expect(result.attempts).toBe(events.length + 1);
    for (const event of events) {
      expect(event).toMatchObject({ reason: 'unavailable', status: 503 });
      expect(event.delayMs).toBeGreaterThanOrEqual(1_000); // the service's Retry-After: 1
    }
    expect((await server.executions([result.key])).get(result.key)).toBe(1);
    const again = await client.fetch(url, { ...post, key: result.key });
    expect(again).toMatchObject({ attempts: 1, replayed: true });
  });
});
