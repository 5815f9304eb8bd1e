import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/index.js';
import type { TcpProxy } from '../../support/tcp-proxy.js';
import {
  defaultId,
  expectProblem,
  expectReplayOf,
  type Fixture,
  type StoreSetup,
  until,
  withApp,
} from './fixture.js';
import type { AdapterHarness } from './harness.js';
import { binaryBody, LARGE_PAD } from './routes.js';

/** The `key` option the key-from-the-body cases use: the same on every adapter, since it reads the body only. */
const orderIdOf = (_request: unknown, body: unknown): string | undefined =>
  (body as { orderId?: string } | undefined)?.orderId;

interface Case {
  readonly name: string;
  readonly options?: Record<string, unknown>;
  readonly only?: (harness: AdapterHarness) => boolean;
  readonly run: (fixture: Fixture, harness: AdapterHarness) => Promise<void>;
}

/**
 * The HTTP semantics (docs/http.md) as a table: every case runs against every adapter and every store. Each case builds a fresh app on
 * a fresh store, sends real requests (in-process or over a socket) and checks the answers and how often the
 * handler ran.
 */
export const cases: Case[] = [
  {
    name: 'first request runs; a retry replays status, kept headers and the exact bytes, without Set-Cookie',
    async run({ send, key, counters }) {
      const k = key();
      const first = await send('/payments', { key: k });
      expect(first.status).toBe(201);
      expect(first.headers['x-handler']).toBe('yes');
      expect(first.cookies).toEqual(['session=abc; Path=/', 'theme=dark; Path=/']);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const replay = await send('/payments', { key: k });
      expectReplayOf(replay, first);
      expect(replay.headers['x-handler']).toBe('yes');
      expect(replay.cookies).toEqual([]);
      expect(counters.get('payments', k)).toBe(1);
    },
  },
  {
    name: "a replay keeps the headers this request's middleware set (CORS, request id); it replays those the handler set or changed",
    async run({ send, key, store }) {
      const k = key();
      const first = await send('/payments', { key: k, headers: { origin: 'https://a.example' } });
      expect(first.status).toBe(201);
      expect(first.headers['access-control-allow-origin']).toBe('https://a.example');
      const replay = await send('/payments', { key: k, headers: { origin: 'https://b.example' } });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers['access-control-allow-origin']).toBe('https://b.example');
      expect(replay.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(replay.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
      // The handler's own header, and the one it changed from the middleware's value, are its response.
      expect(replay.headers['x-handler']).toBe('yes');
      expect(replay.headers['cache-control']).toBe('private');
      const stored = (await store.get(defaultId('POST', '/payments', k)))?.outcome?.headers ?? [];
      const names = stored.map(([name]) => name);
      expect(names).toContain('x-handler');
      expect(names).not.toContain('x-request-id');
      expect(names).not.toContain('access-control-allow-origin');
    },
  },
  {
    name: 'the outcome is stored before the client sees the response',
    async run({ send, key, store }) {
      const k = key();
      const first = await send('/payments', { key: k });
      expect(first.status).toBe(201);
      const record = await store.get(defaultId('POST', '/payments', k));
      expect(record?.state).toBe('completed');
    },
  },
  {
    name: 'the quoted Structured-Field form and the bare form name the same key',
    async run({ send, key, counters }) {
      const k = key('quo"ted\\');
      const quoted = `"${k.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
      const first = await send('/payments', { key: quoted });
      expect(first.status).toBe(201);
      expectReplayOf(await send('/payments', { key: k }), first);
      expect(counters.get('payments', k)).toBe(1);
    },
  },
  {
    name: 'a key of 255 characters is accepted; 256 is not',
    async run({ send }) {
      const max = `${crypto.randomUUID()}`.padEnd(255, 'x');
      expect((await send('/payments', { key: max })).status).toBe(201);
      expectProblem(await send('/payments', { key: `${max}y` }), 'key-malformed', 400);
    },
  },
  {
    name: 'malformed keys get 400 problem+json and never run the handler',
    async run({ send, counters }) {
      for (const bad of ['""', '"unterminated', '"a"b"', '"a\\x"', '"a";param=1']) {
        const response = await send('/payments', { key: bad });
        expectProblem(response, 'key-malformed', 400);
      }
      expect(counters.get('payments', undefined)).toBe(0);
    },
  },
  {
    name: 'two keys joined into one field ("a, b") are refused with 400, never read as one key; a quoted comma is fine',
    async run({ send, key, counters }) {
      for (const joined of ['a, b', 'a,b', 'k, "k"', '"k", "k"', '"k", k']) {
        const problem = expectProblem(await send('/payments', { key: joined }), 'key-malformed', 400);
        expect(['bad-characters', 'bad-quoting', 'multiple']).toContain(problem.reason);
      }
      expect(counters.total).toBe(0);
      const quoted = key('a, b');
      expect((await send('/payments', { key: `"${quoted}"` })).status).toBe(201);
      expect(counters.get('payments', quoted)).toBe(1);
    },
  },
  {
    name: 'a required key that is missing gets 400 problem+json',
    async run({ send, counters }) {
      expectProblem(await send('/payments'), 'key-missing', 400);
      expect(counters.get('payments', undefined)).toBe(0);
    },
  },
  {
    name: 'a key taken from the body (key option): a retry with the same field replays, whatever its headers; another field runs',
    options: { key: orderIdOf },
    async run({ send, key, counters }) {
      const k = key('order');
      const body = JSON.stringify({ orderId: k, amount: 100 });
      const first = await send('/payments', { body });
      expect(first.status).toBe(201);
      // The header is not the key on this route: a different one (or none) is the same request.
      const replay = await send('/payments', { body, key: key('ignored') });
      expectReplayOf(replay, first);
      const other = await send('/payments', { body: JSON.stringify({ orderId: `${k}-2`, amount: 100 }) });
      expect(other.status).toBe(201);
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(counters.get('payments', k)).toBe(1);
      expect(counters.get('payments', `${k}-2`)).toBe(1);
    },
  },
  {
    name: 'a key from the body follows the header rules: none is 400 key-missing, a number or 256 characters 400 key-malformed',
    options: { key: orderIdOf },
    async run({ send, counters }) {
      expectProblem(await send('/payments', { body: '{"amount":1}' }), 'key-missing', 400);
      expectProblem(await send('/payments', { body: '{"orderId":42}' }), 'key-malformed', 400);
      expectProblem(await send('/payments', { body: '{"orderId":{"a":1}}' }), 'key-malformed', 400);
      const long = JSON.stringify({ orderId: 'x'.repeat(256) });
      expectProblem(await send('/payments', { body: long }), 'key-malformed', 400);
      expectProblem(await send('/payments', { body: '{"orderId":"a\\u0007b"}' }), 'key-malformed', 400);
      expect(counters.total).toBe(0);
    },
  },
  {
    name: 'a key from the body with required: false: a request without one runs unprotected, every time',
    options: { key: orderIdOf, required: false },
    async run({ send, counters }) {
      const statuses = [await send('/payments'), await send('/payments')].map((r) => r.status);
      expect(statuses).toEqual([201, 201]);
      expect(counters.total).toBe(2);
    },
  },
  {
    name: 'with required: false, requests without a key run every time and never share a record',
    options: { required: false },
    async run({ send, counters }) {
      const first = await send('/payments');
      const second = await send('/payments');
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(first.json().id).not.toBe(second.json().id);
      expect(counters.get('payments', undefined)).toBe(2);
    },
  },
  {
    name: 'safe methods pass through untouched, key or not',
    async run({ send, key, counters }) {
      const k = key();
      await send('/payments', { key: k, method: 'GET' });
      const again = await send('/payments', { key: k, method: 'GET' });
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(counters.get('get-payments', undefined)).toBe(2);
    },
  },
  {
    name: 'a duplicate while the first is in flight gets 409 + Retry-After; the 409 is never stored',
    async run({ send, key, gates, counters }) {
      const k = key();
      const first = send('/slow', { key: k });
      await until(() => gates.arrived.has(k));
      const conflict = await send('/slow', { key: k });
      expectProblem(conflict, 'request-in-progress', 409);
      expect(Number(conflict.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(Number(conflict.headers['retry-after']))).toBe(true);
      gates.open(k);
      const original = await first;
      expect(original.status).toBe(201);
      expectReplayOf(await send('/slow', { key: k }), original);
      expect(counters.get('slow', k)).toBe(1);
    },
  },
  {
    name: "a 409's Retry-After follows the route's observed run time, not the lease (30 s)",
    async run({ send, key, gates }) {
      // Before any run finished: 1 s (poll soon), never the whole lease.
      const k1 = key('first');
      const first = send('/slow', { key: k1 });
      await until(() => gates.arrived.has(k1));
      expect((await send('/slow', { key: k1 })).headers['retry-after']).toBe('1');
      // The first run takes over a second and a half: that is the route's run time now.
      await new Promise((resolve) => setTimeout(resolve, 1_600));
      gates.open(k1);
      expect((await first).status).toBe(201);
      const k2 = key('second');
      const second = send('/slow', { key: k2 });
      await until(() => gates.arrived.has(k2));
      const conflict = await send('/slow', { key: k2 });
      expectProblem(conflict, 'request-in-progress', 409);
      // 1.6 s in whole seconds: 2 (and far from the 30 s lease).
      expect(conflict.headers['retry-after']).toBe('2');
      gates.open(k2);
      expect((await second).status).toBe(201);
    },
  },
  {
    name: 'with waitMs, a duplicate in flight waits and gets the first answer',
    options: { waitMs: 5_000 },
    async run({ send, key, gates, counters }) {
      const k = key();
      const first = send('/slow', { key: k });
      await until(() => gates.arrived.has(k));
      const second = send('/slow', { key: k });
      await new Promise((resolve) => setTimeout(resolve, 30));
      gates.open(k);
      const [a, b] = await Promise.all([first, second]);
      expect(a.status).toBe(201);
      expectReplayOf(b, a);
      expect(counters.get('slow', k)).toBe(1);
    },
  },
  {
    name: 'reusing a key with another body gets 422 and does not poison the original',
    async run({ send, key, counters }) {
      const k = key();
      const first = await send('/payments', { key: k, body: '{"amount":100,"currency":"EUR"}' });
      expectProblem(
        await send('/payments', { key: k, body: '{"amount":999,"currency":"EUR"}' }),
        'key-reused',
        422,
      );
      expectReplayOf(await send('/payments', { key: k, body: '{"amount":100,"currency":"EUR"}' }), first);
      expect(counters.get('payments', k)).toBe(1);
    },
  },
  {
    name: 'reusing a key with another query string gets 422',
    async run({ send, key }) {
      const k = key();
      expect((await send('/payments?account=1', { key: k })).status).toBe(201);
      expectProblem(await send('/payments?account=2', { key: k }), 'key-reused', 422);
    },
  },
  {
    name: 'the same bytes under another media type are another request (422); parameters and case do not count',
    async run({ send, key, counters }) {
      const k = key();
      const body = '{"amount":1}';
      expect((await send('/payments', { key: k, body, contentType: 'text/plain' })).status).toBe(201);
      expectProblem(
        await send('/payments', { key: k, body, contentType: 'application/json' }),
        'key-reused',
        422,
      );
      const again = await send('/payments', { key: k, body, contentType: 'Text/Plain; charset=utf-8' });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(counters.get('payments', k)).toBe(1);
    },
  },
  {
    name: 'by default a reordered JSON body is another payload (422)',
    async run({ send, key }) {
      const k = key();
      expect((await send('/payments', { key: k, body: '{"amount":1,"currency":"EUR"}' })).status).toBe(201);
      expectProblem(
        await send('/payments', { key: k, body: '{"currency":"EUR","amount":1}' }),
        'key-reused',
        422,
      );
    },
  },
  {
    name: "with fingerprint 'canonical-json', key order and whitespace do not matter",
    options: { fingerprint: 'canonical-json' },
    async run({ send, key, counters }) {
      const k = key();
      const first = await send('/payments', {
        key: k,
        body: '{"amount":1,"currency":"EUR","meta":{"a":1,"b":2}}',
      });
      const replay = await send('/payments', {
        key: k,
        body: '{ "meta": {"b":2, "a":1}, "currency":"EUR",  "amount":1 }',
      });
      expectReplayOf(replay, first);
      expectProblem(
        await send('/payments', { key: k, body: '{"amount":2,"currency":"EUR","meta":{"a":1,"b":2}}' }),
        'key-reused',
        422,
      );
      expect(counters.get('payments', k)).toBe(1);
    },
  },
  {
    name: 'adapters that see the raw bytes treat a whitespace change as another payload',
    only: (harness) => harness.rawBytes,
    async run({ send, key }) {
      const k = key();
      expect((await send('/payments', { key: k, body: '{"amount":1}' })).status).toBe(201);
      expectProblem(await send('/payments', { key: k, body: '{ "amount": 1 }' }), 'key-reused', 422);
    },
  },
  {
    name: 'one key on two routes names two records (scope includes the route)',
    async run({ send, key, counters }) {
      const k = key();
      expect((await send('/payments', { key: k })).status).toBe(201);
      expect((await send('/text', { key: k })).status).toBe(200);
      expect(counters.get('payments', k)).toBe(1);
      expect(counters.get('text', k)).toBe(1);
    },
  },
  {
    name: 'one key from two clients (Authorization) names two records: no cross-client replay',
    async run({ send, key, counters }) {
      const k = key();
      const alice = await send('/payments', { key: k, headers: { authorization: 'Bearer alice' } });
      const bob = await send('/payments', { key: k, headers: { authorization: 'Bearer bob' } });
      expect(bob.headers['idempotent-replayed']).toBeUndefined();
      expect(bob.json().id).not.toBe(alice.json().id);
      expectReplayOf(await send('/payments', { key: k, headers: { authorization: 'Bearer alice' } }), alice);
      expect(counters.get('payments', k)).toBe(2);
    },
  },
  ...identityCarrierCases(),
  {
    name: 'a keyed request with no identity carrier is answered, and the logger is told once that its scope is shared',
    options: { logger: { warn: (message: string) => scopeWarnings.push(message) } },
    async run({ send, key, counters }) {
      scopeWarnings.length = 0;
      const k = key();
      const first = await send('/payments', { key: k });
      expectReplayOf(await send('/payments', { key: k }), first);
      await send('/payments', { key: key('other') });
      expect(counters.get('payments', k)).toBe(1);
      expect(scopeWarnings).toHaveLength(1);
      expect(scopeWarnings[0]).toMatch(/carried no Authorization, API-key header \(x-api-key.*\) or cookie/);
      expect(scopeWarnings[0]).toMatch(/scope: \(request\) =>/);
    },
  },
  {
    name: 'an explicit scope is never warned about',
    options: {
      scope: () => 'tenant-1',
      logger: { warn: (message: string) => scopeWarnings.push(message) },
    },
    async run({ send, key }) {
      scopeWarnings.length = 0;
      expect((await send('/payments', { key: key() })).status).toBe(201);
      expect(scopeWarnings).toEqual([]);
    },
  },
  {
    name: 'a custom scope function replaces the default',
    options: { scope: () => 'tenant-1' },
    async run({ send, key, counters }) {
      const k = key();
      const alice = await send('/payments', { key: k, headers: { authorization: 'Bearer alice' } });
      expectReplayOf(await send('/payments', { key: k, headers: { authorization: 'Bearer bob' } }), alice);
      expect(counters.get('payments', k)).toBe(1);
    },
  },
  {
    name: 'a 5xx is not replayed: the key is released and a retry runs',
    async run({ send, key, counters }) {
      const k = key();
      expect((await send('/fail-once', { key: k })).status).toBe(500);
      const retry = await send('/fail-once', { key: k });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expectReplayOf(await send('/fail-once', { key: k }), retry);
      expect(counters.get('fail-once', k)).toBe(2);
    },
  },
  {
    name: 'with keepServerErrors, a 5xx is stored and replayed',
    options: { keepServerErrors: true },
    async run({ send, key, counters }) {
      const k = key();
      const first = await send('/fail-once', { key: k });
      expect(first.status).toBe(500);
      expectReplayOf(await send('/fail-once', { key: k }), first);
      expect(counters.get('fail-once', k)).toBe(1);
    },
  },
  {
    name: 'a thrown error releases the key; the retry runs',
    async run({ send, key, counters }) {
      const k = key();
      expect((await send('/throw', { key: k })).status).toBe(500);
      const retry = await send('/throw', { key: k });
      expect(retry.status).toBe(201);
      expect(counters.get('throw', k)).toBe(2);
    },
  },
  {
    name: 'deterministic 4xx are stored; 408/409/425/429 and 5xx are not',
    async run({ send, key, counters }) {
      for (const [code, kept] of [
        [400, true],
        [404, true],
        [422, true],
        [408, false],
        [409, false],
        [425, false],
        [429, false],
        [503, false],
      ] as const) {
        const k = key(`s${code}`);
        expect((await send(`/status/${code}`, { key: k })).status).toBe(code);
        const again = await send(`/status/${code}`, { key: k });
        expect(again.status, `status ${code}`).toBe(code);
        expect(again.headers['idempotent-replayed'], `status ${code}`).toBe(kept ? 'true' : undefined);
        expect(counters.get('status', k), `status ${code}`).toBe(kept ? 1 : 2);
      }
    },
  },
  {
    name: 'binary bodies replay byte for byte',
    async run({ send, key }) {
      const k = key();
      const first = await send('/binary', { key: k });
      expect(first.body.equals(binaryBody(1))).toBe(true);
      expectReplayOf(await send('/binary', { key: k }), first);
    },
  },
  {
    name: 'streamed writes are captured whole and replayed',
    async run({ send, key }) {
      const k = key();
      const first = await send('/stream', { key: k });
      expect(first.body.toString()).toBe('part1-part2-1');
      expectReplayOf(await send('/stream', { key: k }), first);
    },
  },
  {
    name: 'text and empty (204) responses replay',
    async run({ send, key, counters }) {
      const k = key();
      const text = await send('/text', { key: k });
      expect(text.body.toString()).toBe('hello 1');
      expectReplayOf(await send('/text', { key: k }), text);
      const empty = await send('/empty', { key: k });
      expect(empty.status).toBe(204);
      const again = await send('/empty', { key: k });
      expect(again.status).toBe(204);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(counters.get('empty', k)).toBe(1);
    },
  },
  {
    name: 'a handler can opt one response out of storage',
    async run({ send, key, counters }) {
      const k = key();
      await send('/skip', { key: k });
      const again = await send('/skip', { key: k });
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(counters.get('skip', k)).toBe(2);
    },
  },
  {
    name: 'a response over the size cap is recorded as completed; replays say it was not retained',
    async run({ send, key, counters }) {
      const k = key();
      const first = await send('/large', { key: k });
      expect(first.status).toBe(201);
      expect(first.json().pad).toBe(LARGE_PAD);
      const replay = await send('/large', { key: k });
      const problem = expectProblem(replay, 'response-not-retained', 201);
      expect(problem.originalStatus).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(counters.get('large', k)).toBe(1);
    },
  },
  {
    name: 'a client-supplied Idempotent-Replayed header neither skips nor fakes a replay',
    async run({ send, key, counters }) {
      const k = key();
      const first = await send('/payments', { key: k, headers: { 'idempotent-replayed': 'true' } });
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(counters.get('payments', k)).toBe(1);
    },
  },
  {
    name: 'a crashed owner does not block its key past the lease: the retry takes over',
    async run({ send, key, store, counters }) {
      const k = key();
      const id = defaultId('POST', '/payments', k);
      const fingerprintOfRetry = await claimAsCrashedOwner(store, id, send, k);
      expect(fingerprintOfRetry.status).toBe(409);
      await new Promise((resolve) => setTimeout(resolve, 250));
      const retry = await send('/payments', { key: k });
      expect(retry.status).toBe(201);
      expect(counters.get('payments', k)).toBe(1);
      expect((await store.get(id))?.attempt).toBe(2);
    },
  },
  {
    name: 'a request that lost its claim mid-flight answers 503 lease-lost and stores nothing',
    async run({ send, key, store, gates }) {
      const k = key();
      const id = defaultId('POST', '/slow', k);
      const pending = send('/slow', { key: k });
      await until(() => gates.arrived.has(k));
      await store.delete(id);
      gates.open(k);
      const answer = await pending;
      expectProblem(answer, 'lease-lost', 503);
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(await store.get(id)).toBeUndefined();
    },
  },
  {
    name: 'with the local cache, hot replays are answered in process (even once the record is gone)',
    options: { localCache: { maxEntries: 100, maxBytes: 1_000_000, ttlMs: 60_000 } },
    async run({ send, key, store, counters }) {
      const k = key();
      const first = await send('/payments', { key: k });
      await store.delete(defaultId('POST', '/payments', k));
      expectReplayOf(await send('/payments', { key: k }), first);
      expectProblem(await send('/payments', { key: k, body: '{"other":1}' }), 'key-reused', 422);
      expect(counters.get('payments', k)).toBe(1);
    },
  },
  {
    name: 'long-running: 202 + Location at once, 202 while running, the stored answer after',
    options: { longRunning: { location: (id: string) => `/operations/${id}`, pollAfterMs: 2_000 } },
    async run({ send, key, gates, counters }) {
      const k = key();
      const accepted = await send('/defer', { key: k });
      expect(accepted.status).toBe(202);
      expect(accepted.headers['retry-after']).toBe('2');
      const location = accepted.headers.location!;
      expect(location).toBe(`/operations/${defaultId('POST', '/defer', k)}`);
      expect((await send(location, { method: 'GET' })).status).toBe(202);
      const duplicate = await send('/defer', { key: k });
      expect(duplicate.status).toBe(202);
      expect(duplicate.headers.location).toBe(location);
      gates.open(k);
      let done = await send(location, { method: 'GET' });
      for (let tries = 0; done.status === 202 && tries < 200; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        done = await send(location, { method: 'GET' });
      }
      expect(done.status).toBe(201);
      expect(done.json()).toEqual({ n: 1 });
      expect(done.headers['idempotent-replayed']).toBe('true');
      expectReplayOf(await send('/defer', { key: k }), done);
      expect(counters.get('defer', k)).toBe(1);
      expectProblem(await send('/operations/unknown', { method: 'GET' }), 'operation-not-found', 404);
    },
  },
  {
    name: 'the store unreachable: 503 problem+json with Retry-After, the handler never runs',
    async run(_fixture, harness) {
      await withApp(harness, unreachableStore, {}, async ({ send, key, counters }) => {
        const k = key();
        const answer = await send('/payments', { key: k });
        expectProblem(answer, 'store-unavailable', 503);
        expect(answer.headers['retry-after']).toBe('1');
        expect(counters.get('payments', k)).toBe(0);
      });
    },
  },
  {
    name: 'the status route goes through the store guard: a stopped Redis answers 503 within storeTimeoutMs',
    async run(_fixture, harness) {
      const options = {
        storeTimeoutMs: 300,
        longRunning: { location: (id: string) => `/operations/${id}` },
      };
      await withApp(harness, stoppedRedis, options, async ({ send, key, counters }) => {
        const k = key();
        expectProblem(await send('/defer', { key: k }), 'store-unavailable', 503);
        expect(counters.get('defer', k)).toBe(0);
        const started = Date.now();
        const status = await Promise.race([
          send(`/operations/${defaultId('POST', '/defer', k)}`, { method: 'GET' }),
          new Promise<undefined>((resolve) => setTimeout(resolve, 3_000)),
        ]);
        expect(status, 'the status route hung').toBeDefined();
        expectProblem(status!, 'store-unavailable', 503);
        expect(status!.headers['retry-after']).toBe('1');
        expect(Date.now() - started).toBeLessThan(1_500);
      });
    },
  },
  {
    name: 'failOpen opens only for an unreachable store: a duplicate in flight gets 409, another body 422, a corrupt record 500',
    options: { failOpen: true },
    async run({ send, key, gates, counters, store }) {
      const k = key();
      const first = send('/slow', { key: k });
      await until(() => gates.arrived.has(k));
      // Raced: a duplicate let through would wait at the same gate as the first.
      const duplicate = await Promise.race([
        send('/slow', { key: k }),
        new Promise<undefined>((resolve) => setTimeout(resolve, 2_000)),
      ]);
      expect(duplicate, 'the duplicate ran the handler').toBeDefined();
      expectProblem(duplicate!, 'request-in-progress', 409);
      gates.open(k);
      const original = await first;
      expect(original.status).toBe(201);
      expectProblem(await send('/slow', { key: k, body: '{"amount":999}' }), 'key-reused', 422);
      expectReplayOf(await send('/slow', { key: k }), original);
      expect(counters.get('slow', k)).toBe(1);
      // A record the engine cannot read makes begin fail with CorruptRecordError: that is no outage either.
      const corrupt = key('corrupt');
      const id = defaultId('POST', '/payments', corrupt);
      const fingerprint = await fingerprintOf('/payments');
      const claimed = await store.begin({ key: id, fingerprint, leaseMs: 60_000, retentionMs: 60_000 });
      if (claimed.kind !== 'acquired') throw new Error(`expected to claim the key, got ${claimed.kind}`);
      const garbage = {
        status: 201,
        headers: [],
        body: Buffer.from('not brotli'),
        encoding: 'br',
        storage: 'inline',
      } as const;
      await store.complete({ key: id, token: claimed.token, outcome: garbage, retentionMs: 60_000 });
      expectProblem(await send('/payments', { key: corrupt }), 'record-corrupt', 500);
      expect(counters.get('payments', corrupt)).toBe(0);
    },
  },
  {
    name: 'failOpen runs the handler unprotected when the store is unreachable',
    async run(_fixture, harness) {
      await withApp(harness, unreachableStore, { failOpen: true }, async ({ send, key }) => {
        expect((await send('/payments', { key: key() })).status).toBe(201);
      });
    },
  },
  {
    name: 'a body that does not parse is rejected before any record exists; the corrected retry runs',
    async run({ send, key, counters }) {
      const k = key();
      expect((await send('/payments', { key: k, body: '{"amount":' })).status).toBe(400);
      const fixed = await send('/payments', { key: k });
      expect(fixed.status).toBe(201);
      expect(counters.get('payments', k)).toBe(1);
    },
  },
  {
    name: 'a body over the size limit is rejected before any record exists; the corrected retry runs',
    async run({ send, key, counters }) {
      const k = key();
      const huge = JSON.stringify({ pad: 'y'.repeat(1_100_000) });
      expect((await send('/payments', { key: k, body: huge })).status).toBe(413);
      expect((await send('/payments', { key: k })).status).toBe(201);
      expect(counters.get('payments', k)).toBe(1);
    },
  },
];

const scopeWarnings: string[] = [];

/**
 * The identity carriers of the default scope: two principals who send one key and one body never share a record,
 * and one principal's retry replays even when its other cookies (a load balancer's, analytics) changed.
 */
function identityCarrierCases(): Case[] {
  const carriers: [
    label: string,
    alice: Record<string, string>,
    bob: Record<string, string>,
    aliceLater: Record<string, string>,
  ][] = [
    [
      'a session cookie',
      { cookie: '_ga=GA1.1; connect.sid=s%3Aalice; AWSALB=one' },
      { cookie: '_ga=GA1.1; connect.sid=s%3Abob; AWSALB=one' },
      { cookie: 'AWSALB=two; connect.sid=s%3Aalice; _ga=GA1.1; _gat=1' },
    ],
    [
      'a session cookie beside Authorization',
      { authorization: 'Bearer shared-app-token', cookie: 'sessionid=alice' },
      { authorization: 'Bearer shared-app-token', cookie: 'sessionid=bob' },
      { authorization: 'Bearer shared-app-token', cookie: 'theme=dark; sessionid=alice' },
    ],
    ['X-Api-Key', { 'x-api-key': 'alice-key' }, { 'x-api-key': 'bob-key' }, { 'x-api-key': 'alice-key' }],
    ['Api-Key', { 'api-key': 'alice-key' }, { 'api-key': 'bob-key' }, { 'api-key': 'alice-key' }],
    ['X-Auth-Token', { 'x-auth-token': 'alice' }, { 'x-auth-token': 'bob' }, { 'x-auth-token': 'alice' }],
    [
      'a cookie of an unknown name (the whole Cookie header, when nothing else identifies)',
      { cookie: 'myapp=alice' },
      { cookie: 'myapp=bob' },
      { cookie: 'myapp=alice' },
    ],
    [
      'Authorization, whatever the other cookies do',
      { authorization: 'Bearer alice', cookie: 'AWSALB=one' },
      { authorization: 'Bearer bob', cookie: 'AWSALB=one' },
      { authorization: 'Bearer alice', cookie: 'AWSALB=two' },
    ],
  ];
  return carriers.map(([label, alice, bob, aliceLater]) => ({
    name: `one key and body from two principals identified by ${label}: two records; the same principal's retry replays`,
    async run({ send, key, counters }) {
      const k = key();
      const first = await send('/payments', { key: k, headers: alice });
      expect(first.status).toBe(201);
      const other = await send('/payments', { key: k, headers: bob });
      expect(other.status).toBe(201);
      expect(other.headers['idempotent-replayed']).toBeUndefined();
      expect(other.json().id).not.toBe(first.json().id);
      expectReplayOf(await send('/payments', { key: k, headers: aliceLater }), first);
      expect(counters.get('payments', k)).toBe(2);
    },
  }));
}

/** The fingerprint every adapter computes for the suite's default POST body on `path`. */
async function fingerprintOf(path: string): Promise<string> {
  const { requestFingerprint } = await import('../../../src/http/request-fingerprint.js');
  return requestFingerprint(
    {
      request: undefined,
      method: 'POST',
      route: path,
      target: path,
      header: (name) => (name === 'content-type' ? 'application/json' : undefined),
      bodyBytes: Buffer.from('{"amount":100,"currency":"EUR"}'),
      parsedBody: undefined,
    },
    'bytes',
  );
}

/** Plays a process that claimed the key with a 100 ms lease and died; returns the answer to a retry meanwhile. */
async function claimAsCrashedOwner(store: Store, id: string, send: Fixture['send'], key: string) {
  // The claim must carry the fingerprint the adapter will compute for the retry, or the retry is a mismatch.
  const { requestFingerprint } = await import('../../../src/http/request-fingerprint.js');
  const body = '{"amount":100,"currency":"EUR"}';
  const fingerprint = requestFingerprint(
    {
      request: undefined,
      method: 'POST',
      route: '/payments',
      target: '/payments',
      header: (name) => (name === 'content-type' ? 'application/json' : undefined),
      bodyBytes: Buffer.from(body),
      parsedBody: undefined,
    },
    'bytes',
  );
  const parsedFingerprint = requestFingerprint(
    {
      request: undefined,
      method: 'POST',
      route: '/payments',
      target: '/payments',
      header: (name) => (name === 'content-type' ? 'application/json' : undefined),
      bodyBytes: undefined,
      parsedBody: JSON.parse(body),
    },
    'bytes',
  );
  // Raw-byte adapters and parsing adapters agree here because the body has no whitespace.
  expect(parsedFingerprint).toBe(fingerprint);
  const claimed = await store.begin({ key: id, fingerprint, leaseMs: 100, retentionMs: 60_000 });
  expect(claimed.kind).toBe('acquired');
  return send('/payments', { key, body });
}

/** A store whose backend refuses every call, as a Redis that is down does (fault injection, not a mock). */
const unreachableStore: StoreSetup = {
  name: 'unreachable',
  create: () => {
    const refuse = async (): Promise<never> => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    };
    return {
      name: 'unreachable',
      begin: refuse,
      complete: refuse,
      release: refuse,
      renew: refuse,
      get: refuse,
      delete: refuse,
    };
  },
};

/**
 * The machine's Redis behind a TCP proxy that goes silent once the store is connected: a Redis that stopped
 * answering (frozen, or cut off by the network), so every store call hangs instead of failing.
 */
const stoppedRedis: StoreSetup = {
  name: 'stopped redis',
  create: async () => {
    const { Redis } = await import('ioredis');
    const { RedisStore } = await import('../../../src/stores/redis/index.js');
    const { startTcpProxy } = await import('../../support/tcp-proxy.js');
    const { requireService, services } = await import('../../support/services.js');
    await requireService('redis');
    const proxy = await startTcpProxy(Number(new URL(services.redis.url).port || 6379));
    const client = new Redis({ host: '127.0.0.1', port: proxy.port, maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    await client.ping();
    proxy.blackhole();
    return Object.assign(new RedisStore({ client, prefix: `oncely-http-stopped-${randomUUID()}` }), {
      stopped: { client, proxy },
    });
  },
  destroy: async (store) => {
    await store.close?.();
    const { client, proxy } = (store as unknown as { stopped: { client: Redis; proxy: TcpProxy } }).stopped;
    client.disconnect();
    await proxy.close();
  },
};

export function runHttpSemantics(harness: AdapterHarness, setup: StoreSetup): void {
  describe(`HTTP semantics: ${harness.name} × ${setup.name}`, () => {
    for (const testCase of cases) {
      if (testCase.only && !testCase.only(harness)) continue;
      it(testCase.name, () =>
        withApp(harness, setup, testCase.options ?? {}, (fixture) => testCase.run(fixture, harness)),
      );
    }
  });
}
