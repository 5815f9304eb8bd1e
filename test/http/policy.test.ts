import { readFileSync } from 'node:fs';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { withoutContentCoding } from '../../src/http/content-coding.js';
import { headerLines, parseKeyHeader } from '../../src/http/key-header.js';
import { LocalOutcomeCache } from '../../src/http/local-cache.js';
import { Notices } from '../../src/http/notices.js';
import {
  defaultKeepStatus,
  handlerHeaders,
  snapshotHeaders,
  storableHeaders,
} from '../../src/http/outcome-policy.js';
import { ERRORS_DOC_URL, PROBLEMS, problemAnswer, retryAfterSeconds } from '../../src/http/problem.js';
import { RunTimes } from '../../src/http/run-times.js';
import { defaultScope, defaultScopeWith, type RequestView, sessionCookies } from '../../src/http/scope.js';
import { type InvalidKeyError, isInvalidKeyError, StoreUnavailableError } from '../../src/index.js';

describe('parseKeyHeader', () => {
  it.each([
    ['abc', 'abc'],
    ['  abc\t', 'abc'],
    ['"abc"', 'abc'],
    ['"a\\"b"', 'a"b'],
    ['"a\\\\b"', 'a\\b'],
    ['"with space"', 'with space'],
    ['"a, b"', 'a, b'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
  ])('reads %j as %j', (raw, key) => {
    expect(parseKeyHeader(raw)).toBe(key);
  });

  it('returns undefined when the header is absent', () => {
    expect(parseKeyHeader(undefined)).toBeUndefined();
  });

  it.each([
    ['', 'empty'],
    ['""', 'empty'],
    ['"abc', 'bad-quoting'],
    ['"a"b"', 'bad-quoting'],
    ['"a\\nb"', 'bad-quoting'],
    ['"abc";x=1', 'bad-quoting'],
    ['"tab\there"', 'bad-characters'],
    ['caf\u00e9', 'bad-characters'],
    ['a\u0001b', 'bad-characters'],
    ['x'.repeat(256), 'too-long'],
    ['a, b', 'bad-characters'],
    ['a,b', 'bad-characters'],
    [', a', 'bad-characters'],
    [`"${'x'.repeat(256)}"`, 'too-long'],
  ])('rejects %j (%s)', (raw, reason) => {
    try {
      parseKeyHeader(raw);
      expect.fail('should have thrown');
    } catch (error) {
      expect(isInvalidKeyError(error)).toBe(true);
      expect((error as InvalidKeyError).reason).toBe(reason);
    }
  });

  it('counts the lines of a header in rawHeaders, whatever their case', () => {
    const raw = ['Host', 'x', 'Idempotency-Key', 'a', 'content-type', 'text/plain', 'idempotency-key', 'b'];
    expect(headerLines(raw, 'idempotency-key')).toBe(2);
    expect(headerLines(raw, 'host')).toBe(1);
    expect(headerLines(raw, 'authorization')).toBe(0);
    expect(headerLines(undefined, 'host')).toBe(0);
  });

  it('counts the unescaped length of a quoted key', () => {
    const key = `${'x'.repeat(254)}"`;
    expect(parseKeyHeader(`"${'x'.repeat(254)}\\""`)).toBe(key);
  });
});

describe('outcome policy', () => {
  it('keeps 2xx, 3xx and deterministic 4xx; releases transient 4xx and 5xx', () => {
    const keep = defaultKeepStatus(false);
    for (const status of [200, 201, 204, 303, 400, 401, 403, 404, 410, 422])
      expect(keep(status), String(status)).toBe(true);
    for (const status of [408, 409, 413, 415, 425, 429, 500, 502, 503, 504])
      expect(keep(status), String(status)).toBe(false);
    expect(defaultKeepStatus(true)(500)).toBe(true);
    expect(defaultKeepStatus(true)(429)).toBe(false);
  });

  it('stores content and custom headers, never framing ones, Set-Cookie only when asked', () => {
    const headers = [
      ['Content-Type', 'application/json'],
      ['Set-Cookie', 'a=1'],
      ['Connection', 'keep-alive, X-Hop'],
      ['X-Hop', 'per-connection'],
      ['Transfer-Encoding', 'chunked'],
      ['Content-Length', '12'],
      ['Date', 'Mon, 01 Jan 2024 00:00:00 GMT'],
      ['X-Request-Id', 'r1'],
      ['Location', '/payments/1'],
    ] as const;
    expect(storableHeaders(headers, new Set())).toEqual([
      ['content-type', 'application/json'],
      ['x-request-id', 'r1'],
      ['location', '/payments/1'],
    ]);
    expect(storableHeaders(headers, new Set(['set-cookie', 'date']))).toEqual([
      ['content-type', 'application/json'],
      ['set-cookie', 'a=1'],
      ['date', 'Mon, 01 Jan 2024 00:00:00 GMT'],
      ['x-request-id', 'r1'],
      ['location', '/payments/1'],
    ]);
  });
});

describe('problem answers', () => {
  it('are RFC 9457 problem+json with a type that points into docs/errors.md', () => {
    const answer = problemAnswer('request-in-progress', 'wait', { retryAfterSeconds: 3 });
    expect(answer.status).toBe(409);
    expect(answer.headers).toEqual([
      ['content-type', 'application/problem+json'],
      ['retry-after', '3'],
    ]);
    expect(JSON.parse(Buffer.from(answer.body).toString())).toEqual({
      type: `${ERRORS_DOC_URL}#request-in-progress`,
      title: 'A request with this key is in progress',
      status: 409,
      detail: 'wait',
    });
  });

  it('every problem type has its section in docs/errors.md', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const type of Object.keys(PROBLEMS)) expect(doc, type).toContain(`<a id="${type}"></a>`);
  });

  it('Retry-After is whole seconds, at least 1', () => {
    expect([0, 1, 999, 1000, 1001, 29_999].map(retryAfterSeconds)).toEqual([1, 1, 1, 1, 2, 30]);
  });
});

describe('LocalOutcomeCache', () => {
  const answer = (bytes: number) => ({ status: 201, headers: [], body: new Uint8Array(bytes) });

  it('answers hits, reports a mismatching fingerprint, and misses after its ttl', () => {
    const cache = new LocalOutcomeCache({ maxEntries: 10, maxBytes: 1_000_000, ttlMs: 1_000 });
    cache.remember('k', 'f1', answer(3), 10_000, 0);
    expect(cache.lookup('k', 'f1', 500).kind).toBe('hit');
    expect(cache.lookup('k', 'f2', 500).kind).toBe('mismatch');
    expect(cache.lookup('k', 'f1', 1_000).kind).toBe('miss');
    expect(cache.size).toBe(0);
  });

  it('never outlives the record', () => {
    const cache = new LocalOutcomeCache({ maxEntries: 10, maxBytes: 1_000_000, ttlMs: 60_000 });
    cache.remember('k', 'f', answer(3), 100, 0);
    expect(cache.lookup('k', 'f', 99).kind).toBe('hit');
    expect(cache.lookup('k', 'f', 100).kind).toBe('miss');
  });

  it('is bounded in entries and in bytes, least recently used out first', () => {
    const cache = new LocalOutcomeCache({ maxEntries: 3, maxBytes: 10_000, ttlMs: 60_000 });
    for (const key of ['a', 'b', 'c']) cache.remember(key, 'f', answer(10), 1e12, 0);
    expect(cache.lookup('a', 'f', 1).kind).toBe('hit'); // a is now the most recent
    cache.remember('d', 'f', answer(10), 1e12, 2);
    expect(cache.lookup('b', 'f', 3).kind).toBe('miss');
    expect(cache.size).toBe(3);

    const small = new LocalOutcomeCache({ maxEntries: 100, maxBytes: 2_000, ttlMs: 60_000 });
    for (let index = 0; index < 10; index++) small.remember(`k${index}`, 'f', answer(500), 1e12, 0);
    expect(small.bytes).toBeLessThanOrEqual(2_000);
    expect(small.lookup('k9', 'f', 1).kind).toBe('hit');
    expect(small.lookup('k0', 'f', 1).kind).toBe('miss');
    small.remember('huge', 'f', answer(5_000), 1e12, 0);
    expect(small.lookup('huge', 'f', 1).kind).toBe('miss');
  });
});

describe('headers the handler produced', () => {
  it('are those it added or changed since the hand-over; untouched middleware headers are left out', () => {
    const before = snapshotHeaders([
      ['X-Request-Id', 'r1'],
      ['cache-control', 'no-store'],
      ['vary', 'Origin'],
    ]);
    const after: [string, string][] = [
      ['x-request-id', 'r1'],
      ['cache-control', 'private'],
      ['vary', 'Origin'],
      ['vary', 'Accept'],
      ['content-type', 'application/json'],
    ];
    expect(handlerHeaders(after, before)).toEqual([
      ['cache-control', 'private'],
      ['vary', 'Origin'],
      ['vary', 'Accept'],
      ['content-type', 'application/json'],
    ]);
    expect(snapshotHeaders([])).toBeUndefined();
    expect(handlerHeaders(after, undefined)).toBe(after);
  });
});

describe('default scope', () => {
  const view = (headers: Record<string, string>): RequestView<undefined> => ({
    request: undefined,
    method: 'POST',
    route: '/payments',
    target: '/payments?x=1',
    header: (name) => headers[name],
    bodyBytes: undefined,
    parsedBody: undefined,
  });

  it('is method, route and Authorization alone when nothing else identifies the client (records stay findable)', () => {
    expect(defaultScope(view({ authorization: 'Bearer a' }))).toBe('POST /payments\nBearer a');
    expect(defaultScope(view({}))).toBe('POST /payments\n');
    // Non-session cookies beside Authorization change nothing.
    expect(defaultScope(view({ authorization: 'Bearer a', cookie: 'AWSALB=x; _ga=1' }))).toBe(
      'POST /payments\nBearer a',
    );
  });

  it('adds API-key headers and session cookies; other cookies, CSRF ones included, do not count', () => {
    expect(defaultScope(view({ 'x-api-key': 'k1' }))).toBe('POST /payments\n\nx-api-key: k1');
    const one = defaultScope(view({ cookie: '_ga=1; connect.sid=s1; XSRF-TOKEN=a; csrftoken=b; AWSALB=x' }));
    const two = defaultScope(view({ cookie: 'AWSALB=y; XSRF-TOKEN=c; connect.sid=s1; _gat=1' }));
    expect(one).toBe(two);
    expect(one).toBe('POST /payments\n\ncookie: connect.sid=s1');
    expect(sessionCookies('b_session=2; a_token=1; theme=dark')).toBe('a_token=1; b_session=2');
    for (const name of [
      'PHPSESSID',
      'JSESSIONID',
      'sessionid',
      '__Secure-next-auth.session-token',
      'appSession',
      'jwt',
    ])
      expect(sessionCookies(`${name}=v; theme=dark`), name).toBe(`${name}=v`);
    expect(sessionCookies('theme=dark; _ga=GA1')).toBe('');
  });

  it('counts a Cookie header whole when it holds no session cookie and nothing else identifies the client', () => {
    expect(defaultScope(view({ cookie: 'myapp=alice' }))).toBe('POST /payments\n\ncookie*: myapp=alice');
  });

  it('tells its notices when a request has no identity, or only its whole Cookie header', () => {
    const said: string[] = [];
    const scope = defaultScopeWith({
      anonymous: (route) => said.push(`anonymous ${route}`),
      wholeCookie: (route) => said.push(`whole ${route}`),
    });
    scope(view({ authorization: 'Bearer a' }));
    scope(view({ cookie: 'sid=1' }));
    expect(said).toEqual([]);
    scope(view({}));
    scope(view({ cookie: 'myapp=1' }));
    expect(said).toEqual(['anonymous /payments', 'whole /payments']);
  });
});

describe('store failure notices', () => {
  it('say each cause once a minute while it lasts, with how many failures went unsaid', () => {
    const said: string[] = [];
    const notices = new Notices('node', { warn: (message) => said.push(message) });
    const refused = new StoreUnavailableError('redis begin failed: connect ECONNREFUSED 127.0.0.1:6379', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }),
    });
    notices.storeFailed(refused, 0);
    notices.storeFailed(refused, 1_000);
    // Another driver wording of the same cause.
    notices.storeFailed(
      new StoreUnavailableError('redis begin refused: the connection is reconnecting'),
      2_000,
    );
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^oncely\/node: the idempotency store failed: redis begin failed: connect ECONNREFUSED/,
    );
    notices.storeFailed(new StoreUnavailableError('redis begin timed out after 2000 ms'), 3_000);
    expect(said).toHaveLength(2);
    expect(said[1]).toContain('slower than storeTimeoutMs');
    notices.storeFailed(refused, 60_001);
    expect(said).toHaveLength(3);
    expect(said[2]).toContain('(2 more failures of this kind since the last report)');
  });

  it('name the fix of a missing table, and say nothing with logger: false', () => {
    const said: string[] = [];
    const missing = Object.assign(new Error('relation "oncely"."records" does not exist'), {
      code: '42P01',
      severity: 'ERROR',
    });
    new Notices('express', { warn: (message) => said.push(message) }).storeFailed(
      new StoreUnavailableError('postgres begin failed (SQLSTATE 42P01: relation does not exist)', {
        cause: missing,
      }),
    );
    expect(said[0]).toContain('run `oncely migrate`');
    new Notices('express', undefined).storeFailed(missing);
  });
});

describe('content codings', () => {
  const json = Buffer.from(JSON.stringify({ rows: Array.from({ length: 50 }, (_, index) => index) }));
  const headers = (coding: string): [string, string][] => [
    ['content-type', 'application/json'],
    ['content-encoding', coding],
    ['vary', 'Accept-Encoding'],
  ];

  it('are undone, last applied first, and Content-Encoding dropped', () => {
    for (const [coding, body] of [
      ['gzip', gzipSync(json)],
      ['br', brotliCompressSync(json)],
      ['deflate', deflateSync(json)],
      ['deflate', deflateRawSync(json)],
      ['gzip, br', brotliCompressSync(gzipSync(json))],
      ['identity', json],
    ] as const) {
      const decoded = withoutContentCoding(headers(coding), body, 1_000_000);
      expect(Buffer.from(decoded!.body).equals(json), coding).toBe(true);
      expect(decoded!.headers).toEqual([
        ['content-type', 'application/json'],
        ['vary', 'Accept-Encoding'],
      ]);
    }
  });

  it('leave alone what they cannot undo: no coding, an unknown one, a broken body, a body too large', () => {
    expect(withoutContentCoding([['content-type', 'text/plain']], json, 1_000_000)).toBeUndefined();
    expect(withoutContentCoding(headers('aes128gcm'), json, 1_000_000)).toBeUndefined();
    expect(withoutContentCoding(headers('gzip'), json, 1_000_000)).toBeUndefined();
    expect(withoutContentCoding(headers('gzip'), gzipSync(json), 10)).toBeUndefined();
  });
});

describe('run times (Retry-After of a 409)', () => {
  it("follow the route's moving average, at least 1 s, at most the lease left; 1 s before any run", () => {
    const runs = new RunTimes();
    expect(runs.retryAfterMs('POST /a', 30_000)).toBe(1_000);
    runs.observe('POST /a', 300);
    expect(runs.retryAfterMs('POST /a', 30_000)).toBe(1_000);
    runs.observe('POST /b', 2_500);
    expect(retryAfterSeconds(runs.retryAfterMs('POST /b', 30_000))).toBe(3);
    // The holder's lease ends sooner: after that another attempt may take over.
    expect(retryAfterSeconds(runs.retryAfterMs('POST /b', 1_200))).toBe(2);
    expect(runs.retryAfterMs('POST /b', 10)).toBe(1_000);
    // A moving average: one slow run moves it, it does not replace it.
    runs.observe('POST /b', 12_500);
    expect(runs.retryAfterMs('POST /b', 60_000)).toBe(5_500);
  });
});
