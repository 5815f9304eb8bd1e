import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaymentsServer, startPaymentsServer } from '../../examples/payments/server.js';
import { createClient, type RetryEvent } from '../../src/client/index.js';
import { MemoryStore } from '../../src/index.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

// The client against the real demo payments service (examples/payments, oncely/node on the memory store), with a
// fault-injecting TCP proxy between them. Effects are counted on the server: its ledger counts every charge per
// idempotency key.

const payment = JSON.stringify({ amount: 1999, currency: 'EUR' });
const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: payment };

let server: PaymentsServer;
let proxy: TcpProxy;
let url: string;

beforeAll(async () => {
  server = await startPaymentsServer({ store: new MemoryStore(), processingMs: 20 });
  proxy = await startTcpProxy(Number(new URL(server.url).port));
  url = `http://127.0.0.1:${proxy.port}/payments`;
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
});

async function executions(key: string): Promise<number> {
  return (await server.executions([key])).get(key) ?? 0;
}

describe('the lost response: the server committed, the client never heard', () => {
  it('connection cut after the answer was sent: the client retries with the same key and gets the replay; one charge', async () => {
    const events: RetryEvent[] = [];
    const client = createClient({ baseDelayMs: 10, onRetry: (event) => events.push(event) });
    proxy.loseResponses(1, 'reset');
    const result = await client.fetch(url, post);
    expect(result).toMatchObject({ attempts: 2, replayed: true });
    expect(result.response.status).toBe(201);
    const body = await result.response.json();
    expect(body).toMatchObject({ amount: 1999, currency: 'EUR', status: 'succeeded' });
    expect(events.map((event) => event.reason)).toEqual(['network-error']);
    expect(await executions(result.key)).toBe(1);
    // What the server stored is what the client got: the same payment, byte for byte, on a later call.
    const again = await client.fetch(url, { ...post, key: result.key });
    expect(again).toMatchObject({ attempts: 1, replayed: true });
    expect(await again.response.json()).toEqual(body);
  });

  it('the answer silently never arrives: the attempt times out, the retry gets the replay; one charge', async () => {
    const events: RetryEvent[] = [];
    const client = createClient({ baseDelayMs: 10, attemptTimeoutMs: 500, onRetry: (e) => events.push(e) });
    proxy.loseResponses(1, 'silent');
    const result = await client.fetch(url, post);
    expect(result).toMatchObject({ attempts: 2, replayed: true });
    expect(events.map((event) => event.reason)).toEqual(['attempt-timeout']);
    expect(await executions(result.key)).toBe(1);
  });

  it('lost three times in a row: the fourth attempt replays; still one charge', async () => {
    const client = createClient({ baseDelayMs: 10 });
    proxy.loseResponses(3, 'reset');
    const result = await client.fetch(url, post);
    expect(result).toMatchObject({ attempts: 4, replayed: true });
    expect(await executions(result.key)).toBe(1);
  });

  it('the same fault on one plain fetch: the caller gets an error, yet the server charged', async () => {
    const key = crypto.randomUUID();
    proxy.loseResponses(1, 'reset');
    await expect(
      fetch(url, { ...post, headers: { ...post.headers, 'idempotency-key': key } }),
    ).rejects.toThrow();
    expect(await executions(key)).toBe(1);
  });
});

describe('a 409 storm: duplicates of one key while the first is in flight', () => {
  let slow: PaymentsServer;
  beforeAll(async () => {
    slow = await startPaymentsServer({ store: new MemoryStore(), processingMs: 1_500 });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it('every caller waits out Retry-After and gets the first answer; the payment runs once', async () => {
    const key = `storm-${crypto.randomUUID()}`;
    const events: RetryEvent[] = [];
    const callers = Array.from({ length: 12 }, () =>
      createClient({ baseDelayMs: 10, onRetry: (event) => events.push(event) }),
    );
    const started = performance.now();
    const results = await Promise.all(
      callers.map((client) => client.fetch(`${slow.url}/payments`, { ...post, key })),
    );
    const bodies = await Promise.all(results.map((result) => result.response.text()));
    expect((await slow.executions([key])).get(key)).toBe(1);
    expect(results.every((result) => result.response.status === 201)).toBe(true);
    expect(new Set(bodies).size).toBe(1);
    const fresh = results.filter((result) => !result.replayed);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]?.attempts).toBe(1);
    for (const result of results.filter((r) => r.replayed)) expect(result.attempts).toBeGreaterThanOrEqual(2);
    // The server said Retry-After: 1 to each duplicate, and each waited at least that long.
    expect(events.length).toBeGreaterThanOrEqual(11);
    for (const event of events) {
      expect(event).toMatchObject({ reason: 'in-progress', status: 409 });
      expect(event.delayMs).toBeGreaterThanOrEqual(1_000);
    }
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_500);
  });
});
