import { describe, expect, it } from 'vitest';
import * as oncely from '../../src/index.js';
import {
  ClaimSettledError,
  CorruptRecordError,
  Engine,
  FingerprintMismatchError,
  InProgressError,
  InvalidKeyError,
  InvalidOptionsError,
  isCorruptRecordError,
  isLeaseLostError,
  isOncelyError,
  isStoreUnavailableError,
  LeaseLostError,
  MemoryStore,
  type OncelyEvent,
  type Outcome,
  ResponseNotRetainedError,
  type Store,
  StoreUnavailableError,
  TransactionEscapedError,
} from '../../src/index.js';
import { CircuitBreaker, canonicalJson, validateKey } from '../../src/store.js';
import { FakeClock } from '../../src/testing/index.js';
import { until } from '../http/support/fixture.js';
import { faulty, over } from './faulty-store.js';

const outcome: Outcome = { status: 201, headers: [], body: Buffer.from('ok') };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('errors', () => {
  // Callers branch on `code` and the isX() guards (docs/errors.md); the guards match by name across copies.
  // Built inside the test, not when the file is collected: `npm run mutate` sees only what runs in a test.
  const errorCases = () =>
    [
      [
        new InvalidOptionsError('m'),
        'InvalidOptionsError',
        'ONCELY_INVALID_OPTIONS',
        'isInvalidOptionsError',
      ],
      [new InvalidKeyError('empty', 'm'), 'InvalidKeyError', 'ONCELY_INVALID_KEY', 'isInvalidKeyError'],
      [new InProgressError(1_500, 2), 'InProgressError', 'ONCELY_IN_PROGRESS', 'isInProgressError'],
      [
        new FingerprintMismatchError(),
        'FingerprintMismatchError',
        'ONCELY_FINGERPRINT_MISMATCH',
        'isFingerprintMismatchError',
      ],
      [
        new StoreUnavailableError('m'),
        'StoreUnavailableError',
        'ONCELY_STORE_UNAVAILABLE',
        'isStoreUnavailableError',
      ],
      [new LeaseLostError(7), 'LeaseLostError', 'ONCELY_LEASE_LOST', 'isLeaseLostError'],
      [new CorruptRecordError('m'), 'CorruptRecordError', 'ONCELY_CORRUPT_RECORD', 'isCorruptRecordError'],
      [
        new ResponseNotRetainedError(201),
        'ResponseNotRetainedError',
        'ONCELY_RESPONSE_NOT_RETAINED',
        'isResponseNotRetainedError',
      ],
      [
        new ClaimSettledError(7, 'release'),
        'ClaimSettledError',
        'ONCELY_CLAIM_SETTLED',
        'isClaimSettledError',
      ],
      [
        new TransactionEscapedError(7),
        'TransactionEscapedError',
        'ONCELY_TRANSACTION_ESCAPED',
        'isTransactionEscapedError',
      ],
    ] as const;

  it('carry a stable code and name, and each guard recognises its own class only', () => {
    const cases = errorCases();
    for (const [error, name, code, guard] of cases) {
      expect(error.name).toBe(name);
      expect(error.code).toBe(code);
      expect(isOncelyError(error)).toBe(true);
      for (const [other, , , otherGuard] of cases) {
        const check = (oncely as unknown as Record<string, (e: unknown) => boolean>)[otherGuard]!;
        expect(check(error), `${otherGuard}(${name})`).toBe(other === error || otherGuard === guard);
      }
    }
    expect(new oncely.OncelyError('ONCELY_INVALID_KEY', 'm').name).toBe('OncelyError');
    expect(new InProgressError(1_500, 2)).toMatchObject({ retryAfterMs: 1_500, attempt: 2 });
    expect(new InvalidKeyError('too-long', 'm').reason).toBe('too-long');
    expect(new ClaimSettledError(7, 'release')).toMatchObject({ token: 7, attempted: 'release' });
    expect(new LeaseLostError(7).message).toContain('7');
  });

  it('keep the cause they are given, and have none otherwise', () => {
    const cause = new Error('driver');
    expect(new StoreUnavailableError('m', { cause }).cause).toBe(cause);
    expect('cause' in new StoreUnavailableError('m')).toBe(false);
    expect(new StoreUnavailableError('m').outcomeStored).toBe(false);
    expect(new StoreUnavailableError('m', { outcomeStored: true }).outcomeStored).toBe(true);
    expect(new TransactionEscapedError(7)).toMatchObject({
      token: 7,
      keyOutcome: 'terminal',
      replayed: false,
    });
    expect(new TransactionEscapedError(7, { keyOutcome: 'released' }).keyOutcome).toBe('released');
    expect(new TransactionEscapedError(undefined, { replayed: true })).toMatchObject({
      token: undefined,
      replayed: true,
    });
  });

  it('isOncelyError wants an Error whose code is a string starting with ONCELY_', () => {
    const withCode = (code: unknown) => Object.assign(new Error('x'), { code });
    expect(isOncelyError(withCode('ONCELY_X'))).toBe(true);
    expect(isOncelyError(withCode('ECONNRESET'))).toBe(false);
    expect(isOncelyError(withCode(7))).toBe(false);
    expect(isOncelyError(new Error('x'))).toBe(false);
    expect(isOncelyError({ code: 'ONCELY_X', name: 'OncelyError', message: '' })).toBe(false);
    expect(isLeaseLostError({ name: 'LeaseLostError', code: 'ONCELY_LEASE_LOST' })).toBe(false);
    expect(isLeaseLostError(Object.assign(new Error('x'), { name: 'LeaseLostError' }))).toBe(false);
  });
});

describe('keys and fingerprints', () => {
  it('a missing key (undefined or null) says missing; a non-string is bad characters', () => {
    for (const missing of [undefined, null]) {
      expect(() => validateKey(missing)).toThrow(expect.objectContaining({ reason: 'missing' }));
    }
    expect(() => validateKey(42)).toThrow(expect.objectContaining({ reason: 'bad-characters' }));
  });

  it('canonical JSON: toJSON is honoured, bytes are base64, BigInt is decimal, undefined stays undefined', () => {
    expect(canonicalJson({ b: new Date(0), a: 1 })).toBe('{"a":1,"b":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson({ bytes: new Uint8Array([1, 2, 3]) })).toBe('{"bytes":"AQID"}');
    expect(canonicalJson({ n: 12345678901234567890n })).toBe('{"n":"12345678901234567890"}');
    expect(canonicalJson(undefined)).toBe('undefined');
    expect(canonicalJson([{ z: 1, y: [{ b: 1, a: 2 }] }])).toBe('[{"y":[{"a":2,"b":1}],"z":1}]');
  });
});

describe('engine options', () => {
  it('are required, and each bad one is refused naming it', () => {
    expect(() => new Engine(null as never)).toThrow(InvalidOptionsError);
    expect(() => new Engine(undefined as never)).toThrow(InvalidOptionsError);
    const store = new MemoryStore();
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ leaseMs: 9 }, /leaseMs/],
      [{ leaseMs: 1.5 }, /leaseMs/],
      [{ leaseMs: '100' }, /leaseMs/],
      [{ storeTimeoutMs: 0 }, /storeTimeoutMs/],
      [{ compressAboveBytes: -1 }, /compressAboveBytes/],
      [{ maxBodyBytes: 1.5 }, /maxBodyBytes/],
      [{ maxBodyBytes: Number.MAX_SAFE_INTEGER + 2 }, /maxBodyBytes/],
      [{ retentionMs: 0 }, /retentionMs/],
      [{ leases: 1 }, /engine: unknown option "leases"/],
    ];
    for (const [options, message] of bad) {
      expect(() => new Engine({ store, ...options } as never), JSON.stringify(options)).toThrow(message);
    }
    expect(() => new Engine({ store, leaseMs: 10, maxBodyBytes: Number.MAX_SAFE_INTEGER })).not.toThrow();
  });

  it('a store must be one: null, a plain object, or a bare Redis-like client are refused with what to do', () => {
    for (const store of [null, undefined, {}, { begin: 'not a function' }]) {
      expect(() => new Engine({ store } as never)).toThrow(/a store is required/);
    }
    expect(() => new Engine({ store: { defineCommand() {} } } as never)).toThrow(/RedisStore/);
    expect(() => new Engine({ store: { evalsha() {} } } as never)).toThrow(/RedisStore/);
    expect(() => new Engine({ store: { query() {} } } as never)).toThrow(/PostgresStore/);
  });

  it('idempotent() wants functions for fn, key, fingerprint and keep', () => {
    const store = new MemoryStore();
    const fn = async () => 1;
    expect(() => oncely.idempotent('x' as never, { store, key: () => 'k' })).toThrow(/fn must be a function/);
    expect(() => oncely.idempotent(fn, { store, key: 'k' } as never)).toThrow(/key must be a function/);
    expect(() => oncely.idempotent(fn, { store, key: () => 'k', fingerprint: 1 } as never)).toThrow(
      /fingerprint must be a function/,
    );
    expect(() => oncely.idempotent(fn, { store, key: () => 'k', keep: true } as never)).toThrow(
      /keep must be a function/,
    );
  });
});

describe('the circuit breaker', () => {
  it('reports closed, open and half-open; a failed probe keeps the interval it was let through in', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 2, probeIntervalMs: 100 }, () => now);
    expect(breaker.state).toBe('closed');
    breaker.onFailure();
    expect(breaker.state).toBe('closed');
    breaker.onFailure();
    expect(breaker.state).toBe('open');
    now = 100;
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.state).toBe('halfOpen');
    now = 150;
    breaker.onFailure(); // the probe failed half an interval later: the next one is still due at 200
    expect(breaker.state).toBe('open');
    now = 199;
    expect(breaker.tryAcquire()).toBe(false);
    now = 200;
    expect(breaker.tryAcquire()).toBe(true);
    breaker.onSuccess();
    expect(breaker.state).toBe('closed');
  });
});

describe('the store guard', () => {
  it('breaker: false never sheds calls, however many fail', async () => {
    const store = faulty(new MemoryStore());
    const engine = new Engine({ store, breaker: false });
    store.fail.add('get');
    for (let i = 0; i < 12; i++) await expect(engine.inspect('k')).rejects.toSatisfy(isStoreUnavailableError);
    expect(store.calls.get).toBe(12);
  });

  it('a store that throws instead of rejecting fails the call the same way, with the error as cause', async () => {
    const cause = new TypeError('sync');
    const broken: Store = Object.assign(new MemoryStore(), {
      get: () => {
        throw cause;
      },
    });
    const engine = new Engine({ store: broken });
    await expect(engine.inspect('k')).rejects.toSatisfy(
      (error) => isStoreUnavailableError(error) && error.cause === cause,
    );
  });

  it('a call answered in time leaves no timeout behind: no storeError, no breaker failure later', async () => {
    const events: OncelyEvent[] = [];
    const store = new MemoryStore();
    const engine = new Engine({ store, storeTimeoutMs: 20, onEvent: (e) => events.push(e) });
    for (let i = 0; i < 8; i++) await engine.inspect(`k${i}`);
    store.get = () => Promise.reject(new CorruptRecordError('unreadable'));
    for (let i = 0; i < 8; i++) await expect(engine.inspect('k')).rejects.toSatisfy(isCorruptRecordError);
    await sleep(60);
    // Corrupt records are the data's fault, not the store's: they neither open the circuit nor count as outages.
    expect(events.filter((event) => event.type === 'storeError')).toEqual([]);
    store.get = MemoryStore.prototype.get;
    expect(await engine.inspect('k')).toBeUndefined();
  });
});

describe('the store guard counts failures', () => {
  it('a call that timed out and then fails late is one failure, not two', async () => {
    const events: OncelyEvent[] = [];
    const store = new MemoryStore();
    const engine = new Engine({
      store,
      storeTimeoutMs: 10,
      breaker: { failureThreshold: 2, probeIntervalMs: 60_000 },
      onEvent: (e) => events.push(e),
    });
    store.get = () => sleep(40).then(() => Promise.reject(new Error('late failure')));
    await expect(engine.inspect('k')).rejects.toSatisfy(isStoreUnavailableError);
    await sleep(80);
    store.get = MemoryStore.prototype.get;
    // Counted twice, the one failure would have reached the threshold and opened the circuit.
    expect(await engine.inspect('k')).toBeUndefined();
    expect(events.filter((event) => event.type === 'storeError')).toHaveLength(1);
  });

  it('a corrupt record is the data failing, not the store: it clears the count of store failures', async () => {
    const store = faulty(new MemoryStore());
    const engine = new Engine({ store, breaker: { failureThreshold: 2, probeIntervalMs: 60_000 } });
    const corrupt = () => Promise.reject(new CorruptRecordError('unreadable'));
    const get = store.get;
    store.fail.add('get');
    await expect(engine.inspect('k')).rejects.toSatisfy(isStoreUnavailableError);
    store.fail.delete('get');
    store.get = corrupt;
    await expect(engine.inspect('k')).rejects.toSatisfy(isCorruptRecordError);
    store.get = get;
    store.fail.add('get');
    await expect(engine.inspect('k')).rejects.toSatisfy(isStoreUnavailableError);
    store.fail.delete('get');
    expect(await engine.inspect('k')).toBeUndefined();
  });

  it('without a breaker, a corrupt record still reaches the caller as CorruptRecordError', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, breaker: false, storeTimeoutMs: 1_000 });
    store.get = () => Promise.reject(new CorruptRecordError('unreadable'));
    await expect(engine.inspect('k')).rejects.toSatisfy(isCorruptRecordError);
  });
});

describe('a claim', () => {
  it('hands out one signal, already aborted when the claim was lost before anyone read it', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock: clock.now });
    const engine = new Engine({ store, leaseMs: 30 });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', retentionMs: 60_000 });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    clock.advance(30);
    await store.begin({ key: 'k', fingerprint: 'f', leaseMs: 60_000, retentionMs: 60_000 });
    await sleep(80); // a renewal (every 10 ms) is fenced meanwhile
    const { signal } = begun.claim;
    expect(signal.aborted).toBe(true);
    expect(isLeaseLostError(signal.reason)).toBe(true);
    expect(begun.claim.signal).toBe(signal);
  });

  it('stops renewing once settled', async () => {
    const store = faulty(new MemoryStore());
    // A lease long enough that a loaded machine's stalled event loop cannot lose it before `complete`.
    const engine = new Engine({ store, leaseMs: 300 });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', retentionMs: 60_000 });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    expect(begun.claim.signal.aborted).toBe(false);
    await until(() => (store.calls.renew ?? 0) > 0); // renewing every 100 ms
    await begun.claim.complete(outcome);
    const renewals = store.calls.renew ?? 0;
    await sleep(350);
    expect(store.calls.renew ?? 0).toBe(renewals);
    expect(begun.claim.signal.aborted).toBe(false);
  });

  it('a claim lost at its deadline whose signal nobody read leaves no error behind', async () => {
    const store = faulty(new MemoryStore());
    const events: OncelyEvent[] = [];
    const engine = new Engine({ store, leaseMs: 30, onEvent: (e) => events.push(e) });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', retentionMs: 60_000 });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    store.hang.add('renew');
    await sleep(120);
    expect(events.filter((event) => event.type === 'leaseLost')).toHaveLength(1);
    expect(begun.claim.signal.aborted).toBe(true);
  });

  it('says which settle it refused', async () => {
    const engine = new Engine({ store: new MemoryStore() });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await begun.claim.complete(outcome);
    await expect(begun.claim.complete(outcome)).rejects.toMatchObject({ attempted: 'complete' });
    await expect(begun.claim.release()).rejects.toMatchObject({ attempted: 'release' });
  });

  it('gives up completing after its retries when the store stays down, with StoreUnavailableError', async () => {
    const store = faulty(new MemoryStore());
    const engine = new Engine({ store, breaker: false });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    store.fail.add('complete');
    await expect(begun.claim.complete(outcome)).rejects.toSatisfy(isStoreUnavailableError);
    expect(store.calls.complete).toBe(4);
  });

  it('a retried complete that meets another owner is a lost lease, not a success', async () => {
    const clock = new FakeClock();
    const inner = new MemoryStore({ clock: clock.now });
    const store = faulty(inner);
    const engine = new Engine({ store, breaker: false });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    store.fail.add('complete');
    const completing = begun.claim.complete(outcome);
    await sleep(5);
    // The first attempt failed before it reached the store; meanwhile another caller takes the key over.
    store.fail.delete('complete');
    clock.advance(30_000);
    const other = await inner.begin({ key: 'k', fingerprint: 'f', leaseMs: 30_000, retentionMs: 60_000 });
    expect(other.kind).toBe('acquired');
    await expect(completing).rejects.toSatisfy(isLeaseLostError);
    expect((await inner.get('k'))?.state).toBe('inProgress');
  });

  it('keeps an outcome for the retention its verdict asks for', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock: clock.now });
    const engine = new Engine({ store });
    await engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => 1,
      settle: () => ({ keep: true, outcome, retentionMs: 5_000 }),
    });
    expect((await store.get('k'))?.expiresAt).toBe(clock.now() + 5_000);
    await engine.execute({
      key: 'j',
      fingerprint: 'f',
      run: async () => 1,
      settle: () => ({ keep: true, outcome }),
    });
    expect((await store.get('j'))?.expiresAt).toBe(clock.now() + engine.retentionMs);
  });
});

describe('waiting for a duplicate', () => {
  it('gives up at waitMs with inProgress when the holder does not finish', async () => {
    const engine = new Engine({ store: new MemoryStore() });
    const held = await engine.begin({ key: 'k', fingerprint: 'f' });
    const started = Date.now();
    const waited = await engine.begin({ key: 'k', fingerprint: 'f', waitMs: 60 });
    expect(waited.kind).toBe('inProgress');
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(Date.now() - started).toBeLessThan(5_000);
    if (held.kind === 'acquired') await held.claim.release();
  });

  it('polls a store without waitFor, and replays the holder once it completes', async () => {
    const inner = new MemoryStore();
    // The MemoryStore without its waitFor.
    const plain = over(inner, 'plain', {});
    const engine = new Engine({ store: plain });
    const held = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (held.kind !== 'acquired') throw new Error(held.kind);
    const waiting = engine.begin({ key: 'k', fingerprint: 'f', waitMs: 5_000 });
    await sleep(30);
    await held.claim.complete(outcome);
    expect(await waiting).toMatchObject({ kind: 'replay' });
  });
});
