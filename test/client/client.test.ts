import { describe, expect, it } from 'vitest';
import {
  type ClientOptions,
  createClient,
  isDeadlineExceededError,
  isInvalidKeyError,
  isInvalidOptionsError,
  isKeyRejectedError,
  isOncelyError,
  isRetriesExhaustedError,
  type RetryEvent,
} from '../../src/client/index.js';
import { problem, type Step, scriptedFetch } from './support/scripted-fetch.js';

// The client's loop against a scripted fetch: every retry rule, limit and guard, without a network. The same
// rules against the real demo server, through a faulty proxy: demo-server.test.ts.

const URL_ = 'http://payments.test/payments';
const POST = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"amount":1999}' };
const created: Step = { status: 201, body: '{"id":"pay_1"}' };
const replayed: Step = { status: 201, headers: { 'idempotent-replayed': 'true' }, body: '{"id":"pay_1"}' };

function client(steps: readonly Step[], options: ClientOptions = {}) {
  const scripted = scriptedFetch(steps);
  const events: RetryEvent[] = [];
  const instance = createClient({
    fetch: scripted.fetch,
    baseDelayMs: 1,
    maxDelayMs: 5,
    onRetry: (event) => events.push(event),
    ...options,
  });
  return { ...scripted, events, client: instance };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );

describe('one key per operation, the same on every attempt', () => {
  it('retries a lost answer with the same key and the same body bytes, and says it was a replay', async () => {
    const form = new FormData();
    form.set('amount', '1999');
    const { client: c, sent, events } = client(['network-error', 'network-error', replayed]);
    const result = await c.fetch(URL_, { method: 'POST', body: form, timeoutMs: 30_000, maxAttempts: 5 });
    expect(result).toMatchObject({ attempts: 3, replayed: true });
    expect(Object.keys(result).sort()).toEqual(['attempts', 'key', 'replayed', 'response']);
    expect(result.response.status).toBe(201);
    expect(await result.response.text()).toBe('{"id":"pay_1"}');
    const keys = sent.map((request) => request.headers.get('idempotency-key'));
    // The call's own options never reach fetch.
    for (const { init } of sent)
      expect(Object.keys(init).sort()).toEqual(['body', 'headers', 'method', 'signal']);
    expect(new Set(keys)).toEqual(new Set([result.key]));
    expect(result.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(sent.map((request) => request.body)).size).toBe(1);
    expect(new Set(sent.map((request) => request.headers.get('content-type'))).size).toBe(1);
    expect(events.map((event) => [event.attempt, event.reason])).toEqual([
      [1, 'network-error'],
      [2, 'network-error'],
    ]);
  });

  it('two calls are two operations: two keys', async () => {
    const { client: c } = client([created]);
    const [a, b] = await Promise.all([c.fetch(URL_, POST), c.fetch(URL_, POST)]);
    expect(a.key).not.toBe(b.key);
    expect(a).toMatchObject({ attempts: 1, replayed: false });
  });

  it("takes the caller's own key, checked before anything is sent, quoted where the bare form would change it", async () => {
    const { client: c, sent } = client([created]);
    expect((await c.fetch(URL_, { ...POST, key: 'order-42' })).key).toBe('order-42');
    await c.fetch(URL_, { ...POST, key: 'a,b' });
    expect(sent.map((request) => request.headers.get('idempotency-key'))).toEqual(['order-42', '"a,b"']);
    expect(isInvalidKeyError(await failure(c.fetch(URL_, { ...POST, key: '' })))).toBe(true);
    expect(sent).toHaveLength(2);
  });

  it('reuses an Idempotency-Key header the caller set; a different key option beside it is refused', async () => {
    const { client: c, sent } = client(['network-error', created]);
    const headers = { 'idempotency-key': 'from-header' };
    const result = await c.fetch(URL_, { ...POST, headers });
    expect(result.key).toBe('from-header');
    expect(sent.map((request) => request.headers.get('idempotency-key'))).toEqual([
      'from-header',
      'from-header',
    ]);
    expect(isInvalidOptionsError(await failure(c.fetch(URL_, { ...POST, headers, key: 'other' })))).toBe(
      true,
    );
  });

  it('sends the key under the header the server reads', async () => {
    const { client: c, sent } = client([created], { header: 'X-Idempotency-Key' });
    const { key } = await c.fetch(URL_, POST);
    expect(sent[0]?.headers.get('x-idempotency-key')).toBe(key);
    expect(sent[0]?.headers.has('idempotency-key')).toBe(false);
  });
});

describe('what is retried, end to end', () => {
  it.each([409, 429, 503, 500, 502, 504])('%i, then the answer', async (status) => {
    const { client: c, events } = client([{ status }, replayed]);
    const result = await c.fetch(URL_, POST);
    expect(result).toMatchObject({ attempts: 2, replayed: true });
    expect(events[0]).toMatchObject({ attempt: 1, status });
  });

  it.each([400, 401, 404, 413, 422, 501])('%i is final: one attempt, the answer returned', async (status) => {
    const { client: c, sent } = client([{ status, body: 'no' }, created]);
    const result = await c.fetch(URL_, POST);
    expect(result).toMatchObject({ attempts: 1, replayed: false });
    expect(result.response.status).toBe(status);
    expect(await result.response.text()).toBe('no');
    expect(sent).toHaveLength(1);
  });

  it("a retried answer's body is cancelled, freeing its connection for the retry", async () => {
    let cancelled = false;
    const body = new ReadableStream({
      cancel: () => {
        cancelled = true;
      },
    });
    const fetch = async () =>
      cancelled ? new Response('ok', { status: 201 }) : new Response(body, { status: 503 });
    const result = await createClient({ fetch, baseDelayMs: 1 }).fetch(URL_, POST);
    expect(cancelled).toBe(true);
    expect(result).toMatchObject({ attempts: 2 });
  });

  it('a replayed 5xx is final (the server kept it; every retry would get it again)', async () => {
    const { client: c, sent } = client([{ status: 500, headers: { 'idempotent-replayed': 'true' } }]);
    expect(await c.fetch(URL_, POST)).toMatchObject({ attempts: 1, replayed: true });
    expect(sent).toHaveLength(1);
  });

  it("the layer's refusal of the key is a KeyRejectedError, not a result; the application's own 422 is a result", async () => {
    const { client: c } = client([problem('key-reused', 422)]);
    const error = await failure(c.fetch(URL_, { ...POST, key: 'k1' }));
    expect(isKeyRejectedError(error)).toBe(true);
    expect(isOncelyError(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'reused', status: 422, key: 'k1', code: 'ONCELY_KEY_REJECTED' });
    expect(error).toMatchObject({ problem: { detail: 'the key-reused detail' } });

    const malformed = await failure(client([problem('key-malformed', 400)]).client.fetch(URL_, POST));
    expect(malformed).toMatchObject({ reason: 'malformed', status: 400 });

    const own = {
      status: 422,
      headers: { 'content-type': 'application/problem+json' },
      body: '{"type":"about:blank"}',
    };
    const result = await client([own]).client.fetch(URL_, POST);
    expect(result.response.status).toBe(422);
    expect(await result.response.json()).toEqual({ type: 'about:blank' });
  });

  it('gives up after maxAttempts with RetriesExhaustedError: the last answer unread, the key to retry with later', async () => {
    const { client: c, sent } = client([problem('store-unavailable', 503)], { maxAttempts: 3 });
    const error = await failure(c.fetch(URL_, { ...POST, key: 'k2' }));
    expect(isRetriesExhaustedError(error)).toBe(true);
    expect(error).toMatchObject({ key: 'k2', attempts: 3, code: 'ONCELY_RETRIES_EXHAUSTED' });
    expect(sent).toHaveLength(3);
    const { response } = error as { response: Response };
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ status: 503 });
  });

  it('after network errors only, RetriesExhaustedError carries the last one as its cause', async () => {
    const error = await failure(client(['network-error'], { maxAttempts: 2 }).client.fetch(URL_, POST));
    expect(isRetriesExhaustedError(error)).toBe(true);
    expect(error).toMatchObject({ response: undefined, cause: { message: 'fetch failed' } });
  });
});

describe('Retry-After', () => {
  it('is honoured: the retry waits at least what the server asked', async () => {
    const {
      client: c,
      sent,
      events,
    } = client([problem('request-in-progress', 409, { 'retry-after': '1' }), replayed]);
    await c.fetch(URL_, POST);
    expect(events[0]).toMatchObject({ reason: 'in-progress', delayMs: 1_000 });
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(990);
  });

  it('is capped at maxRetryAfterMs', async () => {
    const {
      client: c,
      sent,
      events,
    } = client([{ status: 503, headers: { 'retry-after': '3600' } }, replayed], {
      maxRetryAfterMs: 50,
    });
    await c.fetch(URL_, POST);
    expect(events[0]).toMatchObject({ reason: 'unavailable', delayMs: 50 });
    expect(sent[1]!.at - sent[0]!.at).toBeLessThan(1_000);
  });
});

describe('the deadline', () => {
  it('ends a call whose fetch never answers, even a fetch that ignores its signal', async () => {
    const { client: c, sent } = client(['hang-deaf'], { timeoutMs: 150, attemptTimeoutMs: 60_000 });
    const started = performance.now();
    const error = await failure(c.fetch(URL_, { ...POST, key: 'k3' }));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(error).toMatchObject({ key: 'k3', attempts: 1, timeoutMs: 150, code: 'ONCELY_DEADLINE_EXCEEDED' });
    expect(sent[0]?.signal.aborted).toBe(true);
  });

  it('does not sleep into it: a wait that would end past the deadline gives up at once', async () => {
    const { client: c } = client([{ status: 503, headers: { 'retry-after': '5' } }], { timeoutMs: 1_000 });
    const started = performance.now();
    const error = await failure(c.fetch(URL_, POST));
    expect(performance.now() - started).toBeLessThan(500);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect((error as { response: Response }).response.status).toBe(503);
  });

  it('no attempt starts after it, even when a wait ends late (a busy event loop)', async () => {
    const busy = () => {
      const until = performance.now() + 300;
      while (performance.now() < until) {}
    };
    const { client: c, sent } = client([{ status: 503 }, created], { timeoutMs: 200, onRetry: busy });
    const error = await failure(c.fetch(URL_, POST));
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(error).toMatchObject({ attempts: 1 });
    expect(sent).toHaveLength(1);
  });

  it('per attempt: a silent attempt is aborted and retried, within the overall deadline', async () => {
    const { client: c, sent, events } = client(['hang', replayed], { attemptTimeoutMs: 100 });
    const result = await c.fetch(URL_, POST);
    expect(result).toMatchObject({ attempts: 2, replayed: true });
    expect(sent[0]?.signal.aborted).toBe(true);
    expect(sent[0]?.signal.reason).toMatchObject({ name: 'TimeoutError' });
    expect(events[0]).toMatchObject({ reason: 'attempt-timeout' });
  });
});

describe("the caller's AbortSignal", () => {
  it('aborts the attempt in flight and rejects with its reason', async () => {
    const { client: c, sent } = client(['hang']);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user left')), 50);
    const error = await failure(c.fetch(URL_, { ...POST, signal: controller.signal }));
    expect(error).toMatchObject({ message: 'user left' });
    expect(sent[0]?.signal.aborted).toBe(true);
  });

  it('cuts a wait short', async () => {
    const { client: c, sent } = client([{ status: 503, headers: { 'retry-after': '5' } }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    const error = await failure(c.fetch(URL_, { ...POST, signal: controller.signal }));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect((error as Error).name).toBe('AbortError');
    expect(sent).toHaveLength(1);
  });

  it('already aborted: fetch is not even called', async () => {
    const { client: c, calls } = client([created]);
    const error = await failure(c.fetch(URL_, { ...POST, signal: AbortSignal.abort() }));
    expect((error as Error).name).toBe('AbortError');
    expect(calls()).toBe(0);
  });

  it('still covers the body of the final answer, which the caller reads after the call returns', async () => {
    const { client: c, sent } = client([created]);
    const controller = new AbortController();
    await c.fetch(URL_, { ...POST, signal: controller.signal });
    controller.abort();
    expect(sent[0]?.signal.aborted).toBe(true);
  });
});

describe('options', () => {
  it('are checked once, at createClient', () => {
    for (const options of [
      { timeoutMs: 0 },
      { maxAttempts: 0 },
      { baseDelayMs: -1 },
      { attemptTimeoutMs: 1.5 },
      { header: 'not a header' },
      { fetch: 'fetch' },
      { retries: 3 },
    ]) {
      expect(() => createClient(options as ClientOptions), JSON.stringify(options)).toThrow(
        expect.objectContaining({ name: 'InvalidOptionsError' }),
      );
    }
  });

  it('per call limits are checked too, and win over the client', async () => {
    const { client: c, sent } = client(['network-error'], { maxAttempts: 5 });
    expect(isInvalidOptionsError(await failure(c.fetch(URL_, { ...POST, timeoutMs: -1 })))).toBe(true);
    expect(isRetriesExhaustedError(await failure(c.fetch(URL_, { ...POST, maxAttempts: 2 })))).toBe(true);
    expect(sent).toHaveLength(2);
  });

  it('a request fetch cannot make is a TypeError before any attempt, not a network error retried', async () => {
    const { client: c, calls } = client([created]);
    for (const [url, init] of [
      ['not a url', POST],
      [URL_, { method: 'GET', body: 'x' }],
      [URL_, { ...POST, headers: { 'x-bad': 'line\nbreak' } }],
    ] as const) {
      const error = await failure(c.fetch(url, init));
      expect(error, `${url} ${JSON.stringify(init)}`).toBeInstanceOf(TypeError);
    }
    expect(calls()).toBe(0);
  });

  it('a Request is refused: its body can be read once', async () => {
    const { client: c } = client([created]);
    const request = new Request(URL_, POST) as unknown as string;
    expect(isInvalidOptionsError(await failure(c.fetch(request)))).toBe(true);
  });

  it('an onRetry that throws does not change the outcome', async () => {
    const { client: c } = client(['network-error', created], {
      onRetry: () => {
        throw new Error('logger down');
      },
    });
    expect(await c.fetch(URL_, POST)).toMatchObject({ attempts: 2 });
  });

  it('uses the global fetch, looked up at each call, when none is given', async () => {
    const { fetch: scripted, sent } = scriptedFetch([created]);
    const original = globalThis.fetch;
    globalThis.fetch = scripted as typeof fetch;
    try {
      await createClient().fetch(URL_, POST);
    } finally {
      globalThis.fetch = original;
    }
    expect(sent).toHaveLength(1);
  });
});
