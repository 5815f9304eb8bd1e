import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { acceptedAnswer, answerForError, replayAnswer } from '../../src/http/answers.js';
import { withoutContentCoding } from '../../src/http/content-coding.js';
import { headerLines, parseKeyHeader } from '../../src/http/key-header.js';
import { LocalOutcomeCache } from '../../src/http/local-cache.js';
import { Notices } from '../../src/http/notices.js';
import { checkOptionNames, createShared, resolveRoute } from '../../src/http/options.js';
import {
  defaultKeepStatus,
  handlerHeaders,
  snapshotHeaders,
  storableHeaders,
} from '../../src/http/outcome-policy.js';
import { ERRORS_DOC_URL, PROBLEMS, problemAnswer, retryAfterSeconds } from '../../src/http/problem.js';
import { mediaType, requestFingerprint } from '../../src/http/request-fingerprint.js';
import { RunTimes } from '../../src/http/run-times.js';
import { defaultScope, defaultScopeWith, type RequestView, sessionCookies } from '../../src/http/scope.js';
import { InvalidKeyError, isInvalidKeyError, MemoryStore, StoreUnavailableError } from '../../src/index.js';
import { faulty } from '../unit/faulty-store.js';

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

  it('stores content and custom headers, never framing ones nor Set-Cookie, Date and X-Powered-By only when asked', () => {
    const headers = [
      ['Content-Type', 'application/json'],
      ['Set-Cookie', 'a=1'],
      ['X-Powered-By', 'Express'],
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
    // Set-Cookie stays out even when asked for (the route options refuse that at construction already).
    expect(storableHeaders(headers, new Set(['set-cookie', 'date', 'x-powered-by']))).toEqual([
      ['content-type', 'application/json'],
      ['x-powered-by', 'Express'],
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
    // A repeated header counts as all its lines: one line changed is a change of the header.
    const repeated = snapshotHeaders([
      ['link', '</a>; rel=preload'],
      ['link', '</b>; rel=preload'],
    ]);
    const changed: [string, string][] = [
      ['link', '</c>; rel=preload'],
      ['link', '</b>; rel=preload'],
    ];
    expect(handlerHeaders(changed, repeated)).toEqual(changed);
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

  it('reads the same from a view that holds its headers as a plain object (Node) as through header()', () => {
    const cases: Record<string, string | string[]>[] = [
      {},
      { authorization: 'Bearer a', 'x-api-key': 'k1', cookie: 'connect.sid=s1; _ga=1' },
      { 'api-key': 'k2', 'x-access-token': ['t1', 't2'] },
      { cookie: 'myapp=alice' },
    ];
    for (const headers of cases) {
      const joined = (name: string) => {
        const value = headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      };
      const called = defaultScope({ ...view({}), header: joined });
      // header() answers nothing here: the plain object alone must give the scope.
      expect(defaultScope({ ...view({}), headers }), JSON.stringify(headers)).toBe(called);
    }
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

describe('route options', () => {
  const base = { leaseMs: 30_000, retentionMs: 86_400_000 };
  const resolve = (options: Record<string, unknown>, from: Parameters<typeof resolveRoute>[2] = base) =>
    resolveRoute('hono', options as never, from);

  it('each refusal names what is wrong', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ header: 5 }, /header must be a header name/],
      [{ header: 'Idempotency Key' }, /header must be a header name/],
      [{ leaseMs: 9 }, /leaseMs must be a whole number from 10/],
      [{ retentionMs: 0 }, /retentionMs must be a whole number from 1/],
      [{ leaseMs: 1_000, retentionMs: 999 }, /retentionMs \(999\) must be at least leaseMs \(1000\)/],
      [{ methods: 'POST' }, /methods must be an array/],
      [{ methods: ['POST', 5] }, /methods must be an array/],
      [{ methods: [['POST']] }, /methods must be an array/],
      [{ methods: ['POST', 'HEAD'] }, /HEAD are safe/],
      [{ methods: ['OPTIONS', 'PUT'] }, /OPTIONS are safe/],
      [{ methods: ['GET'] }, /GET are safe/],
      [{ required: 'yes' }, /required must be true or false/],
      [{ failOpen: 1 }, /failOpen must be true or false/],
      [{ waitMs: -1 }, /waitMs must be/],
      [{ keepHeaders: 'x-request-id' }, /keepHeaders must be an array of header names/],
      [{ keepHeaders: ['x-a', 5] }, /keepHeaders must be an array of header names/],
      [{ keepHeaders: ['x a'] }, /keepHeaders must be an array of header names/],
      [{ keepHeaders: ['X-A', 'Content-Length'] }, /cannot keep framing headers \(content-length\)/],
      [{ keepHeaders: ['Set-Cookie'] }, /keepHeaders cannot keep set-cookie: a replay would hand/],
      [{ keep: 'all' }, /keep must be a function/],
      [{ keepServerErrors: 'yes' }, /keepServerErrors must be true or false/],
      [{ longRunning: null }, /longRunning must be \{ location/],
      [{ longRunning: 5 }, /longRunning must be \{ location/],
      [{ longRunning: { location: '/ops' } }, /longRunning must be \{ location/],
      [{ longRunning: { location: () => '/x', pollAfterMs: 0 } }, /longRunning\.pollAfterMs must be/],
      [{ longRunning: { location: () => '/x', every: 1 } }, /longRunning: unknown option "every"/],
      [{ fingerprint: 5 }, /fingerprint must be 'bytes', 'canonical-json' or a function/],
      [{ scope: 5 }, /scope must be a function/],
    ];
    for (const [options, message] of cases)
      expect(() => resolve(options), JSON.stringify(options)).toThrow(message);
  });

  it('the defaults, and what a route inherits from its factory unless it says otherwise', () => {
    const defaults = resolve({});
    expect(defaults).toMatchObject({
      header: 'idempotency-key',
      required: true,
      fingerprint: 'bytes',
      waitMs: 0,
      failOpen: false,
      longRunning: undefined,
      leaseMs: 30_000,
      retentionMs: 86_400_000,
    });
    expect([...defaults.methods]).toEqual(['POST', 'PATCH']);
    expect([...defaults.keepHeaders]).toEqual([]);
    expect([defaults.keep(201), defaults.keep(500)]).toEqual([true, false]);
    // A record may be kept exactly as long as its lease.
    expect(resolve({ leaseMs: 1_000, retentionMs: 1_000 })).toMatchObject({
      leaseMs: 1_000,
      retentionMs: 1_000,
    });
    const factory = resolve({
      header: 'X-Request-Key',
      methods: ['PUT'],
      required: false,
      fingerprint: 'canonical-json',
      keepHeaders: ['X-Trace'],
      keepServerErrors: true,
      waitMs: 200,
      failOpen: true,
      longRunning: { location: (id: string) => `/ops/${id}` },
      leaseMs: 1_000,
      retentionMs: 5_000,
    });
    expect(factory.header).toBe('x-request-key');
    expect(factory.keep(500)).toBe(true);
    expect(factory.longRunning?.pollAfterMs).toBe(1_000);
    const route = resolve({}, factory);
    expect(route).toMatchObject({
      header: 'x-request-key',
      required: false,
      fingerprint: 'canonical-json',
      waitMs: 200,
      failOpen: true,
      leaseMs: 1_000,
      retentionMs: 5_000,
    });
    expect([...route.methods]).toEqual(['PUT']);
    expect([...route.keepHeaders]).toEqual(['x-trace']);
    expect(route.keep(500)).toBe(true);
    expect(route.longRunning?.location('a')).toBe('/ops/a');
    expect(route.scope).toBe(factory.scope);
    // A route's own keep wins over keepServerErrors; keepServerErrors: false over an inherited keep.
    const own = resolve({ keep: (status: number) => status === 418, keepServerErrors: true }, factory);
    expect([own.keep(418), own.keep(500)]).toEqual([true, false]);
    expect(resolve({ keepServerErrors: false }, factory).keep(500)).toBe(false);
    expect(resolve({ fingerprint: 'bytes' }, factory).fingerprint).toBe('bytes');
    const byUser = (request: unknown) => request;
    expect(resolve({ fingerprint: byUser }).fingerprint).toBe(byUser);
  });

  it("a scope function's value is the scope (apart from the default's), and one that is not a string fails the request", () => {
    const view = { request: { tenant: 't1' } } as unknown as RequestView<{ tenant: unknown }>;
    const custom = resolve({ scope: (request: { tenant: unknown }) => request.tenant });
    expect(custom.scope(view)).toBe('custom\nt1');
    const bad = { request: { tenant: 7 } } as unknown as RequestView<{ tenant: unknown }>;
    expect(() => custom.scope(bad)).toThrow(/scope: the function must return a string/);
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const global = resolve({ scope: 'global' });
      expect(global.scope(view)).toBe('global');
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining("scope 'global'"),
        'OncelyGlobalScopeWarning',
      );
    } finally {
      warn.mockRestore();
    }
  });
});

describe('factory options shared by every route', () => {
  const store = new MemoryStore();
  it('are refused by name: anything but an object, an unknown name, a bad onEvent or localCache', () => {
    for (const [options, message] of [
      [null, /oncely\/hono: options are required/],
      ['store', /oncely\/hono: options are required/],
      [{ store, requried: true }, /oncely\/hono: unknown option "requried"/],
    ] as const)
      expect(() => checkOptionNames('hono', options)).toThrow(message);
    expect(() => checkOptionNames('hono', { store, stream: true }, ['stream'])).not.toThrow();
    for (const [options, message] of [
      [{ store, onEvent: 'log' }, /onEvent must be a function/],
      [{ store, localCache: null }, /localCache must be true, false or/],
      [{ store, localCache: 'yes' }, /localCache must be true, false or/],
      [{ store, localCache: { size: 1 } }, /localCache: unknown option "size"/],
      [{ store, localCache: { maxEntries: 0 } }, /localCache\.maxEntries must be/],
      [{ store, localCache: { maxBytes: 0 } }, /localCache\.maxBytes must be/],
      [{ store, localCache: { ttlMs: 0 } }, /localCache\.ttlMs must be/],
    ] as const)
      expect(() => createShared('hono', options as never)).toThrow(message);
  });

  it('localCache: true caches up to 64 MiB and a minute; false or absent caches nothing; maxBodyBytes is passed on', () => {
    expect(createShared('hono', { store }).cache).toBeUndefined();
    expect(createShared('hono', { store, localCache: false }).cache).toBeUndefined();
    const { cache, maxBodyBytes } = createShared('hono', { store, localCache: true, logger: false });
    const body = { status: 201, headers: [], body: new Uint8Array(1024 * 1024) };
    cache!.remember('k', 'f', body, Date.now() + 3_600_000, 0);
    expect(cache!.lookup('k', 'f', 59_999).kind).toBe('hit');
    expect(cache!.lookup('k', 'f', 60_000).kind).toBe('miss');
    expect(maxBodyBytes).toBe(1024 * 1024);
    expect(createShared('hono', { store, maxBodyBytes: 10 }).maxBodyBytes).toBe(10);
  });

  it("calls the user's onEvent with every event, and tells the logger of store failures too", async () => {
    const events: string[] = [];
    const warnings: string[] = [];
    const failing = faulty(new MemoryStore());
    const { engine } = createShared('hono', {
      store: failing,
      breaker: false,
      onEvent: (event) => events.push(event.type),
      logger: { warn: (message: string) => warnings.push(message) },
    });
    await engine.inspect('k');
    failing.fail.add('get');
    await engine.inspect('k').catch(() => {});
    expect(events).toEqual(['storeError']);
    expect(warnings).toHaveLength(1);
    // Without an onEvent of the user's, store failures still reach the logger.
    const quiet: string[] = [];
    const { engine: plain } = createShared('hono', {
      store: failing,
      breaker: false,
      logger: { warn: (message: string) => quiet.push(message) },
    });
    await plain.inspect('k').catch(() => {});
    expect(quiet).toHaveLength(1);
  });
});

describe('default scope notices, as a factory wires them', () => {
  it('reach the logger once each, naming the route and what identifies a client', () => {
    const warnings: string[] = [];
    const { scopeNotices } = createShared('hono', {
      store: new MemoryStore(),
      logger: { warn: (message: string) => warnings.push(message) },
    });
    for (const route of ['POST /payments', 'POST /refunds']) {
      scopeNotices.anonymous?.(route);
      scopeNotices.wholeCookie?.(route);
    }
    expect(warnings).toHaveLength(2);
    // Said, each takes itself off: the requests after it do not call into the notices again.
    expect(scopeNotices.anonymous).toBeUndefined();
    expect(scopeNotices.wholeCookie).toBeUndefined();
    expect(warnings[0]).toMatch(
      /^oncely\/hono: a request with an Idempotency-Key to POST \/payments carried no Authorization, API-key header \(x-api-key, api-key, x-auth-token, x-access-token\) or cookie, so its record is shared/,
    );
    expect(warnings[1]).toMatch(
      /^oncely\/hono: a request with an Idempotency-Key to POST \/payments was scoped by its whole Cookie header: it carried no Authorization/,
    );
  });
});

describe('LocalOutcomeCache accounting', () => {
  const answer = (bytes: number) => ({ status: 201, headers: [], body: new Uint8Array(bytes) });
  it('counts each body plus 256 bytes; an entry of exactly maxBytes fits; replacing one frees its bytes', () => {
    const cache = new LocalOutcomeCache({ maxEntries: 10, maxBytes: 356, ttlMs: 60_000 });
    cache.remember('a', 'f', answer(100), 1e12, 0);
    expect(cache.bytes).toBe(356);
    expect(cache.lookup('a', 'f', 1).kind).toBe('hit');
    cache.remember('a', 'f', answer(50), 1e12, 0);
    expect(cache.bytes).toBe(306);
    expect(cache.size).toBe(1);
    cache.remember('b', 'f', answer(101), 1e12, 0);
    expect(cache.lookup('b', 'f', 1).kind).toBe('miss');
    expect(cache.lookup('a', 'f', 1).kind).toBe('hit');
    // A record that expires now is not kept at all.
    cache.remember('c', 'f', answer(1), 500, 500);
    expect(cache.lookup('c', 'f', 499).kind).toBe('miss');
    expect(cache.bytes).toBe(306);
  });
});

describe('run times, bounded', () => {
  it('remember the last 1,000 routes', () => {
    const runs = new RunTimes();
    for (let route = 0; route < 1_000; route++) runs.observe(`POST /r${route}`, 5_000);
    expect(runs.retryAfterMs('POST /r0', 60_000)).toBe(5_000);
    runs.observe('POST /r1000', 5_000);
    expect(runs.retryAfterMs('POST /r0', 60_000)).toBe(1_000);
    expect(runs.retryAfterMs('POST /r1', 60_000)).toBe(5_000);
  });
});

describe('request fingerprints', () => {
  const view = (
    parts: {
      bodyBytes?: string | Uint8Array;
      parsedBody?: unknown;
      type?: string;
      target?: string;
      method?: string;
    } = {},
  ): RequestView<unknown> => ({
    request: parts,
    method: parts.method ?? 'POST',
    route: undefined,
    target: parts.target ?? '/pay',
    header: (name) => (name === 'content-type' ? parts.type : undefined),
    bodyBytes: typeof parts.bodyBytes === 'string' ? Buffer.from(parts.bodyBytes) : parts.bodyBytes,
    parsedBody: parts.parsedBody,
  });
  const bytes = (parts: Parameters<typeof view>[0]) => requestFingerprint(view(parts), 'bytes');
  const canonical = (parts: Parameters<typeof view>[0]) => requestFingerprint(view(parts), 'canonical-json');

  it('media types are compared without parameters, case or spaces; no Content-Type is its own', () => {
    expect(mediaType(' Application/JSON ; charset=utf-8')).toBe('application/json');
    expect(mediaType('text/plain')).toBe('text/plain');
    expect(mediaType(undefined)).toBe('');
    const json = { bodyBytes: '{"a":1}' };
    expect(bytes({ ...json, type: 'application/json' })).toBe(
      bytes({ ...json, type: 'Application/Json; charset=UTF-8' }),
    );
    expect(bytes(json)).not.toBe(bytes({ ...json, type: 'application/json' }));
  });

  it('are the SHA-256 of method, target, media type and body bytes, so records of earlier releases still match', () => {
    // The formula as docs/http.md states it, computed here apart from the code; a non-ASCII target and body check
    // that both are hashed as UTF-8 bytes.
    const expected = (head: string, body: Uint8Array) =>
      createHash('sha256').update(head).update(body).digest('base64url');
    const body = Buffer.from('{"amount":100,"note":"café"}');
    expect(bytes({ bodyBytes: body, type: 'application/json', target: '/pay/é?x=1' })).toBe(
      expected('POST\n/pay/é?x=1\napplication/json\n', body),
    );
    expect(bytes({ parsedBody: 'plain' })).toBe(expected('POST\n/pay\n\n', Buffer.from('plain')));
    expect(bytes({})).toBe(expected('POST\n/pay\n\n', new Uint8Array(0)));
  });

  it('a parsed body stands in for the bytes a framework did not keep, as its JSON text', () => {
    expect(bytes({ parsedBody: { a: 1 } })).toBe(bytes({ bodyBytes: '{"a":1}' }));
    expect(bytes({ parsedBody: 'plain text' })).toBe(bytes({ bodyBytes: 'plain text' }));
    expect(bytes({ parsedBody: Buffer.from([1, 2, 3]) })).toBe(
      bytes({ bodyBytes: new Uint8Array([1, 2, 3]) }),
    );
    expect(bytes({ parsedBody: null })).toBe(bytes({}));
    expect(bytes({ parsedBody: undefined })).toBe(bytes({ bodyBytes: new Uint8Array(0) }));
    expect(bytes({ parsedBody: { a: 1 } })).not.toBe(bytes({ parsedBody: { a: 2 } }));
  });

  it('canonical-json ignores key order and whitespace, from bytes or a parsed body; what is not JSON counts as it is', () => {
    const reference = canonical({ bodyBytes: '{"a":2,"b":1}' });
    expect(canonical({ bodyBytes: ' { "b": 1, "a": 2 } ' })).toBe(reference);
    expect(canonical({ parsedBody: { b: 1, a: 2 } })).toBe(reference);
    expect(canonical({ parsedBody: '{"b":1,"a":2}' })).toBe(reference);
    expect(canonical({ parsedBody: Buffer.from('{"b":1,"a":2}') })).toBe(reference);
    expect(canonical({ parsedBody: null })).toBe(canonical({}));
    expect(canonical({ bodyBytes: '' })).toBe(canonical({}));
    expect(canonical({ parsedBody: '' })).toBe(canonical({}));
    expect(canonical({ bodyBytes: 'not json' })).toBe(canonical({ parsedBody: 'not json' }));
    expect(canonical({ bodyBytes: 'not json' })).not.toBe(canonical({ bodyBytes: 'not json!' }));
    expect(canonical({ parsedBody: { a: 1 } })).not.toBe(canonical({ parsedBody: { a: 2 } }));
  });

  it("a fingerprint function's value replaces media type and body; method and target still count", () => {
    const byTenant = (request: unknown) => ({ amount: (request as { amount?: number }).amount ?? 0 });
    const of = (parts: Parameters<typeof view>[0] & { amount?: number }) =>
      requestFingerprint(view(parts), byTenant);
    expect(of({ amount: 5, bodyBytes: 'x', type: 'text/plain' })).toBe(of({ amount: 5, bodyBytes: 'y' }));
    expect(of({ amount: 5 })).not.toBe(of({ amount: 6 }));
    expect(of({ amount: 5, target: '/refund' })).not.toBe(of({ amount: 5 }));
    expect(of({ amount: 5, method: 'PATCH' })).not.toBe(of({ amount: 5 }));
  });

  it('are the same on a Node without crypto.hash (before 20.12)', async () => {
    const parts = [{ bodyBytes: '{"a":1}', type: 'application/json' }, { parsedBody: 'text' }, {}];
    const expected = parts.map((each) => [bytes(each), canonical(each)]);
    vi.resetModules();
    vi.doMock('node:crypto', async (original) => ({
      ...(await original<typeof import('node:crypto')>()),
      hash: undefined,
    }));
    try {
      const older = await import('../../src/http/request-fingerprint.js');
      const again = parts.map((each) => [
        older.requestFingerprint(view(each), 'bytes'),
        older.requestFingerprint(view(each), 'canonical-json'),
      ]);
      expect(again).toEqual(expected);
    } finally {
      vi.doUnmock('node:crypto');
      vi.resetModules();
    }
  });
});

describe('default scope, the edges', () => {
  const view = (headers: Record<string, string>, target = '/payments?x=1'): RequestView<undefined> => ({
    request: undefined,
    method: 'POST',
    route: undefined,
    target,
    header: (name) => headers[name],
    bodyBytes: undefined,
    parsedBody: undefined,
  });

  it('without a route template the path stands in, its query left out', () => {
    expect(defaultScope(view({}, '/payments?x=1'))).toBe(defaultScope(view({}, '/payments?x=2')));
    expect(defaultScope(view({}, '/payments'))).toBe('POST /payments\n');
  });

  it('an API key alone identifies the client: no notice, and a non-session cookie beside it is not counted', () => {
    const said: string[] = [];
    const scope = defaultScopeWith({
      anonymous: (route) => said.push(`anonymous ${route}`),
      wholeCookie: (route) => said.push(`whole ${route}`),
    });
    expect(scope(view({ 'x-api-key': 'k1', cookie: 'theme=dark' }))).toBe('POST /payments\n\nx-api-key: k1');
    expect(said).toEqual([]);
    // An empty Cookie header is no cookie at all.
    expect(scope(view({ cookie: '' }))).toBe('POST /payments\n');
    expect(said).toEqual(['anonymous /payments']);
  });

  it('a session cookie is told by its name, never its value; a cookie without a value counts by its name', () => {
    expect(sessionCookies('theme=sessionless; lang=jwt')).toBe('');
    expect(sessionCookies('sid; theme=dark')).toBe('sid');
  });
});

describe('idempotency key header, the edges', () => {
  const reasonOf = (raw: string) => {
    try {
      parseKeyHeader(raw);
    } catch (error) {
      return (error as InvalidKeyError).reason;
    }
    return undefined;
  };

  it('optional whitespace on either side alone is trimmed too', () => {
    expect(parseKeyHeader(' abc')).toBe('abc');
    expect(parseKeyHeader('abc\t')).toBe('abc');
    expect(parseKeyHeader('"a~b"')).toBe('a~b');
  });

  it('a quoted key says what is wrong first: a control character, or a key too long, before a missing quote', () => {
    expect(reasonOf(`"\u0001${'x'.repeat(300)}"`)).toBe('bad-characters');
    expect(reasonOf(`"${'x'.repeat(300)}`)).toBe('too-long');
    expect(reasonOf(`"${'x'.repeat(250)}`)).toBe('bad-quoting');
  });

  it('counts only lines of exactly that header name', () => {
    const raw = [
      'Idempotency-Key',
      'a',
      'idempotency-kez',
      'b',
      'X-Idempotency-Key',
      'c',
      'IDEMPOTENCY-KEY',
      'd',
    ];
    expect(headerLines(raw, 'idempotency-key')).toBe(2);
  });
});

describe('answers', () => {
  const json = (answer: { body: Uint8Array }) => JSON.parse(Buffer.from(answer.body).toString('utf8'));
  const header = (answer: { headers: readonly (readonly [string, string])[] }, name: string) =>
    answer.headers.filter(([each]) => each === name).map(([, value]) => value);

  it('a missing key is key-missing; any other bad key is key-malformed with its reason', () => {
    const missing = answerForError(new InvalidKeyError('missing', 'm'))!;
    expect(json(missing)).toMatchObject({ type: `${ERRORS_DOC_URL}#key-missing`, status: 400 });
    const malformed = answerForError(new InvalidKeyError('too-long', 'm'))!;
    expect(json(malformed)).toMatchObject({ type: `${ERRORS_DOC_URL}#key-malformed`, reason: 'too-long' });
    expect(answerForError(new Error('the handler failed'))).toBeUndefined();
    expect(answerForError('a string')).toBeUndefined();
  });

  it('a response not retained keeps its status and its headers but those describing the missing body', () => {
    const answer = replayAnswer({
      retained: false,
      status: 201,
      headers: [
        ['content-type', 'application/json'],
        ['content-language', 'en'],
        ['location', '/payments/1'],
      ],
    });
    expect(answer.status).toBe(201);
    expect(header(answer, 'location')).toEqual(['/payments/1']);
    expect(header(answer, 'idempotent-replayed')).toEqual(['true']);
    expect(header(answer, 'content-type')).toEqual(['application/problem+json']);
    expect(header(answer, 'content-language')).toEqual([]);
    expect(json(answer)).toMatchObject({ originalStatus: 201 });
  });

  it('202 Accepted for a long-running request: JSON naming where to poll, Retry-After in seconds', () => {
    const accepted = acceptedAnswer('/operations/1', 1_500);
    expect(accepted.status).toBe(202);
    expect(accepted.headers).toEqual([
      ['content-type', 'application/json'],
      ['retry-after', '2'],
      ['location', '/operations/1'],
    ]);
    expect(json(accepted)).toEqual({ status: 'in-progress', location: '/operations/1' });
    expect(header(acceptedAnswer(undefined, 1_000), 'location')).toEqual([]);
  });

  it('a problem without a Retry-After sends none', () => {
    expect(header(problemAnswer('key-reused', 'reused'), 'retry-after')).toEqual([]);
  });
});

describe('content codings, listed loosely', () => {
  it('empty list members are skipped, as RFC 9110 lists allow', () => {
    const body = Buffer.from('{"a":1}');
    const decoded = withoutContentCoding([['content-encoding', ' , gzip,']], gzipSync(body), 1_000);
    expect(Buffer.from(decoded!.body).equals(body)).toBe(true);
  });
});
