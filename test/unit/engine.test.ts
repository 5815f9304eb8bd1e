import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  Engine,
  FingerprintMismatchError,
  InProgressError,
  type Instrumentation,
  InvalidOptionsError,
  LeaseLostError,
  MemoryStore,
  type OncelyEvent,
  type Outcome,
  StoreUnavailableError,
} from '../../src/index.js';
import type { StoreTransaction, TransactionBeginResult, WaitForOptions } from '../../src/store.js';
import { faulty, over } from './faulty-store.js';

const response = (text: string, status = 201): Outcome => ({
  status,
  headers: [['content-type', 'application/json']],
  body: Buffer.from(text),
});
const keep = (outcome: Outcome) => ({ keep: true as const, outcome });

afterEach(() => {
  vi.useRealTimers();
});

describe('Engine', () => {
  it('runs the first request and replays its outcome byte for byte after', async () => {
    const engine = new Engine({ store: new MemoryStore() });
    const run = vi.fn(async () => response('{"id":"pay_1"}'));
    const first = await engine.execute({ key: 'k', fingerprint: 'f', run, settle: keep });
    expect(first).toMatchObject({ kind: 'executed', stored: true, attempt: 1 });
    const second = await engine.execute({ key: 'k', fingerprint: 'f', run, settle: keep });
    expect(run).toHaveBeenCalledTimes(1);
    expect(second.kind).toBe('replayed');
    if (second.kind !== 'replayed' || !second.outcome.retained) throw new Error('expected a retained replay');
    expect(second.outcome.outcome.status).toBe(201);
    expect(Buffer.from(second.outcome.outcome.body).toString()).toBe('{"id":"pay_1"}');
  });

  it('answers a concurrent duplicate with InProgressError, or waits for it and replays', async () => {
    const engine = new Engine({ store: new MemoryStore() });
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const first = engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => {
        await gate;
        return response('one');
      },
      settle: keep,
    });
    await vi.waitFor(() => engine.store.get('k').then((r) => expect(r?.state).toBe('inProgress')));
    const duplicate = engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => response('two'),
      settle: keep,
    });
    await expect(duplicate).rejects.toBeInstanceOf(InProgressError);
    const waiting = engine.execute({
      key: 'k',
      fingerprint: 'f',
      waitMs: 5_000,
      run: async () => response('three'),
      settle: keep,
    });
    finish();
    await first;
    const waited = await waiting;
    expect(waited.kind).toBe('replayed');
    if (waited.kind === 'replayed' && waited.outcome.retained)
      expect(Buffer.from(waited.outcome.outcome.body).toString()).toBe('one');
  });

  it('rejects the same key with another fingerprint', async () => {
    const engine = new Engine({ store: new MemoryStore() });
    await engine.execute({ key: 'k', fingerprint: 'f1', run: async () => response('x'), settle: keep });
    await expect(
      engine.execute({ key: 'k', fingerprint: 'f2', run: async () => response('y'), settle: keep }),
    ).rejects.toBeInstanceOf(FingerprintMismatchError);
  });

  it('releases the key when the code throws or the verdict is not to keep, so a retry runs again', async () => {
    const events: OncelyEvent[] = [];
    const engine = new Engine({ store: new MemoryStore(), onEvent: (e) => events.push(e) });
    await expect(
      engine.execute({
        key: 'k',
        fingerprint: 'f',
        run: async () => Promise.reject(new Error('boom')),
        settle: keep,
      }),
    ).rejects.toThrow('boom');
    const second = await engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => response('503', 503),
      settle: () => ({ keep: false }),
    });
    expect(second).toMatchObject({ kind: 'executed', stored: false, attempt: 2 });
    const third = await engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => response('ok'),
      settle: keep,
    });
    expect(third).toMatchObject({ kind: 'executed', stored: true, attempt: 3 });
    expect(events.filter((e) => e.type === 'released').map((e) => e.type === 'released' && e.reason)).toEqual(
      ['error', 'notKept'],
    );
  });

  it('renews the lease while the code runs, so a slow owner is never taken over', async () => {
    vi.useFakeTimers();
    const store = faulty(new MemoryStore({ sweepIntervalMs: 0 }));
    const engine = new Engine({ store, leaseMs: 300 });
    let finish!: () => void;
    const running = engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: (context) =>
        new Promise<Outcome>((resolve) => (finish = () => resolve(response(String(context.signal.aborted))))),
      settle: keep,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(store.calls.renew).toBeGreaterThanOrEqual(3);
    await expect(
      engine.execute({ key: 'k', fingerprint: 'f', run: async () => response('dup'), settle: keep }),
    ).rejects.toBeInstanceOf(InProgressError);
    finish();
    const done = await running;
    expect(done).toMatchObject({ kind: 'executed', stored: true });
    if (done.kind === 'executed') expect(Buffer.from(done.result.body).toString()).toBe('false');
  });

  it('aborts the signal when renewal is fenced by a takeover, and refuses the stale result', async () => {
    vi.useFakeTimers();
    const memory = new MemoryStore({ sweepIntervalMs: 0 });
    const stalled = faulty(memory);
    const events: OncelyEvent[] = [];
    const owner = new Engine({ store: stalled, leaseMs: 300, onEvent: (e) => events.push(e) });
    const other = new Engine({ store: memory, leaseMs: 300 });
    let signal!: AbortSignal;
    let finish!: () => void;
    const running = owner.execute({
      key: 'k',
      fingerprint: 'f',
      run: (context) => {
        signal = context.signal;
        return new Promise<Outcome>((resolve) => {
          finish = () => resolve(response('stale'));
        });
      },
      settle: keep,
    });
    // The owner stalls: its renewals stop reaching the store, so its lease runs out and another caller takes over.
    stalled.fail.add('renew');
    await vi.advanceTimersByTimeAsync(301);
    const takeover = await other.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => response('fresh'),
      settle: keep,
    });
    expect(takeover).toMatchObject({ kind: 'executed', attempt: 2 });
    stalled.fail.delete('renew');
    await vi.advanceTimersByTimeAsync(200);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LeaseLostError);
    finish();
    await expect(running).rejects.toBeInstanceOf(LeaseLostError);
    const replay = await other.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => response('x'),
      settle: keep,
    });
    if (replay.kind !== 'replayed' || !replay.outcome.retained) throw new Error('expected replay');
    expect(Buffer.from(replay.outcome.outcome.body).toString()).toBe('fresh');
    expect(events.map((e) => e.type)).toContain('leaseLost');
  });

  it('fails closed with StoreUnavailableError on a hanging store, then opens the circuit', async () => {
    vi.useFakeTimers();
    const store = faulty(new MemoryStore({ sweepIntervalMs: 0 }));
    store.hang.add('begin');
    const engine = new Engine({
      store,
      storeTimeoutMs: 100,
      breaker: { failureThreshold: 2, probeIntervalMs: 1_000 },
    });
    const run = vi.fn(async () => response('x'));
    for (let i = 0; i < 2; i++) {
      const call = engine.execute({ key: 'k', fingerprint: 'f', run, settle: keep });
      const assertion = expect(call).rejects.toBeInstanceOf(StoreUnavailableError);
      await vi.advanceTimersByTimeAsync(100);
      await assertion;
    }
    const callsBefore = store.calls.begin;
    await expect(engine.execute({ key: 'k', fingerprint: 'f', run, settle: keep })).rejects.toThrow(
      /circuit open/,
    );
    expect(store.calls.begin).toBe(callsBefore);
    store.hang.delete('begin');
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(engine.execute({ key: 'k', fingerprint: 'f', run, settle: keep })).resolves.toMatchObject({
      kind: 'executed',
    });
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('inspect reads a record through the same guard: a hanging get fails in storeTimeoutMs, then the circuit sheds it', async () => {
    vi.useFakeTimers();
    const store = faulty(new MemoryStore({ sweepIntervalMs: 0 }));
    const engine = new Engine({
      store,
      storeTimeoutMs: 100,
      breaker: { failureThreshold: 1, probeIntervalMs: 1_000 },
    });
    await engine.execute({ key: 'k', fingerprint: 'f', run: async () => response('x'), settle: keep });
    await expect(engine.inspect('k')).resolves.toMatchObject({ state: 'completed', fingerprint: 'f' });
    await expect(engine.inspect('other')).resolves.toBeUndefined();
    store.hang.add('get');
    const call = engine.inspect('k');
    const assertion = expect(call).rejects.toBeInstanceOf(StoreUnavailableError);
    await vi.advanceTimersByTimeAsync(100);
    await assertion;
    const callsBefore = store.calls.get;
    await expect(engine.inspect('k')).rejects.toThrow(/circuit open/);
    expect(store.calls.get).toBe(callsBefore);
  });

  it('retries a failed complete, so a brief store blip does not lose a finished effect', async () => {
    const store = faulty(new MemoryStore());
    const engine = new Engine({ store, breaker: false });
    const result = engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => {
        store.fail.add('complete');
        setTimeout(() => store.fail.delete('complete'), 60);
        return response('x');
      },
      settle: keep,
    });
    await expect(result).resolves.toMatchObject({ kind: 'executed', stored: true });
    expect(store.calls.complete).toBeGreaterThan(1);
    expect((await store.get('k'))?.state).toBe('completed');
  });

  it('a complete whose reply was lost is recognised on retry, not misreported as a lost lease', async () => {
    const store = faulty(new MemoryStore());
    const engine = new Engine({ store, breaker: false });
    store.loseReply.add('complete');
    const result = await engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => response('x'),
      settle: keep,
    });
    expect(result).toMatchObject({ kind: 'executed', stored: true });
    expect(store.calls.complete).toBe(2);
  });

  it('a durability shortfall (outcome stored, replicas short) is reported, not retried', async () => {
    const memory = new MemoryStore();
    const engine = new Engine({
      breaker: false,
      store: {
        ...faulty(memory),
        complete: async (input) => {
          await memory.complete(input);
          throw new StoreUnavailableError('1 of 2 replicas acknowledged', { outcomeStored: true });
        },
      },
    });
    const error = await engine
      .execute({ key: 'k', fingerprint: 'f', run: async () => response('x'), settle: keep })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).outcomeStored).toBe(true);
    expect((await memory.get('k'))?.state).toBe('completed');
  });

  it('compresses large bodies and replays them identically; over the cap the body is not retained', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, maxBodyBytes: 100_000 });
    const body = JSON.stringify({ items: Array.from({ length: 400 }, (_, i) => ({ i, name: `item ${i}` })) });
    await engine.execute({ key: 'big', fingerprint: 'f', run: async () => response(body), settle: keep });
    const stored = await store.get('big');
    expect(stored?.outcome?.encoding).toBe('br');
    expect(stored?.outcome?.body.byteLength).toBeLessThan(body.length / 3);
    const replay = await engine.execute({
      key: 'big',
      fingerprint: 'f',
      run: async () => response('no'),
      settle: keep,
    });
    if (replay.kind !== 'replayed' || !replay.outcome.retained) throw new Error('expected replay');
    expect(Buffer.from(replay.outcome.outcome.body).toString()).toBe(body);

    await engine.execute({
      key: 'huge',
      fingerprint: 'f',
      run: async () => response('x'.repeat(100_001)),
      settle: keep,
    });
    const huge = await engine.execute({
      key: 'huge',
      fingerprint: 'f',
      run: async () => response('again'),
      settle: keep,
    });
    expect(huge).toMatchObject({ kind: 'replayed', outcome: { retained: false, status: 201 } });
  });

  it('keeps huge bodies in a blob store when one is given', async () => {
    const blobs = new Map<string, Uint8Array>();
    const blobStore = {
      put: async (key: string, body: Uint8Array) => {
        blobs.set(`blob:${key}`, body);
        return `blob:${key}`;
      },
      get: async (reference: string) => blobs.get(reference),
    };
    const engine = new Engine({ store: new MemoryStore(), maxBodyBytes: 10, blobStore });
    await engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => response('0123456789abcdef'),
      settle: keep,
    });
    const replay = await engine.execute({
      key: 'k',
      fingerprint: 'f',
      run: async () => response('no'),
      settle: keep,
    });
    if (replay.kind !== 'replayed' || !replay.outcome.retained) throw new Error('expected replay');
    expect(Buffer.from(replay.outcome.outcome.body).toString()).toBe('0123456789abcdef');
  });

  it('validates options at construction', () => {
    const store = new MemoryStore();
    expect(() => new Engine({ store, leaseMs: -1 })).toThrow(InvalidOptionsError);
    expect(() => new Engine({ store, leaseMs: 1.5 })).toThrow(/leaseMs must be a whole number/);
    expect(() => new Engine({ store, leseMs: 10 } as never)).toThrow(/unknown option "leseMs"/);
    expect(() => new Engine({} as never)).toThrow(/a store is required/);
  });

  it('a throwing event hook never breaks a request', async () => {
    const engine = new Engine({
      store: new MemoryStore(),
      onEvent: () => {
        throw new Error('hook bug');
      },
    });
    await expect(
      engine.execute({ key: 'k', fingerprint: 'f', run: async () => response('x'), settle: keep }),
    ).resolves.toMatchObject({
      kind: 'executed',
    });
  });
});

describe('Engine instrumentation', () => {
  /** An instrumentation that writes down what each execution reports: store calls, code runs, events, its end. */
  function recording() {
    const executions: { scope: string | undefined; log: string[] }[] = [];
    const instrumentation: Instrumentation = {
      engine: () => ({
        start: (_key, scope) => {
          const log: string[] = [];
          executions.push({ scope, log });
          return {
            store: (operation, call) => {
              log.push(operation);
              return call();
            },
            run: (code) => {
              log.push('run');
              return code();
            },
            event: (event) => log.push(`event ${event.type}`),
            end: (error) => log.push(error === undefined ? 'end' : 'end with error'),
          };
        },
      }),
    };
    return { executions, instrumentation };
  }

  it('sees each execution: its store calls by operation, the code it runs, its events and its end', async () => {
    const { executions, instrumentation } = recording();
    const store = faulty(new MemoryStore());
    const engine = new Engine({ store, instrumentation, leaseMs: 30, breaker: false });
    // A run long enough for a renewal, whose complete's reply is lost: retried, found fenced, read back.
    store.loseReply.add('complete');
    await engine.execute({
      key: 'k',
      fingerprint: 'f',
      scope: 'charge',
      run: () => new Promise<Outcome>((resolve) => setTimeout(() => resolve(response('x')), 40)),
      settle: keep,
    });
    await engine.begin({ key: 'k', fingerprint: 'f' });
    const held = await engine.begin({ key: 'h', fingerprint: 'f' });
    await engine.begin({ key: 'h', fingerprint: 'f' });
    if (held.kind !== 'acquired') throw new Error(held.kind);
    await held.claim.release();
    store.fail.add('begin');
    await expect(engine.begin({ key: 'x', fingerprint: 'f' })).rejects.toBeInstanceOf(StoreUnavailableError);

    const [executed, replayed, holder, conflict, failed] = executions.map((execution) => execution.log);
    expect(executions[0]!.scope).toBe('charge');
    expect(executed!.slice(0, 3)).toEqual(['begin', 'event acquired', 'run']);
    expect(executed).toContain('renew');
    expect(executed!.filter((entry) => !['renew', 'run'].includes(entry)).slice(2)).toEqual([
      'complete',
      'complete',
      'get',
      'event completed',
      'end',
    ]);
    expect(replayed).toEqual(['begin', 'event replayed', 'end']);
    expect(conflict).toEqual(['begin', 'event conflict', 'end']);
    expect(holder).toEqual(['begin', 'event acquired', 'release', 'event released', 'end']);
    expect(failed).toEqual(['begin', 'end with error']);
  });

  it('an instrumentation without an engine method instruments nothing; a malformed one is refused', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, instrumentation: {} });
    await expect(
      engine.execute({ key: 'k', fingerprint: 'f', run: async () => response('x'), settle: keep }),
    ).resolves.toMatchObject({ kind: 'executed' });
    for (const instrumentation of [null, 5, 'otel', { engine: 'yes' }])
      expect(() => new Engine({ store, instrumentation } as never)).toThrow(InvalidOptionsError);
    expect(() => new Engine({ store, instrumentation: { engine: () => undefined } })).not.toThrow();
  });
});

describe('Engine waiting for a duplicate', () => {
  /** The store as given, with its begins counted and the timeouts its waitFor was given written down. */
  function counted(inner: MemoryStore, withWaitFor: boolean) {
    const seen = { begins: 0, waits: [] as number[] };
    const store = over(inner, 'counted', {
      begin: (input) => {
        seen.begins++;
        return inner.begin(input);
      },
      ...(withWaitFor && {
        waitFor: (key: string, options: WaitForOptions) => {
          seen.waits.push(options.timeoutMs);
          return inner.waitFor(key, options);
        },
      }),
    });
    return { store, seen };
  }

  it("sleeps on the store's waitFor until the holder settles: one begin after it, no polling", async () => {
    const { store, seen } = counted(new MemoryStore(), true);
    const engine = new Engine({ store });
    const held = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (held.kind !== 'acquired') throw new Error(held.kind);
    const waiting = engine.begin({ key: 'k', fingerprint: 'f', waitMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await held.claim.complete(response('first'));
    expect((await waiting).kind).toBe('replay');
    expect(seen.begins).toBe(3);
    expect(seen.waits).toHaveLength(1);
    expect(seen.waits[0]).toBeGreaterThan(4_000);
    expect(seen.waits[0]).toBeLessThanOrEqual(5_000);
  });

  it('polls a store without waitFor from 10 ms on, doubling up to 250 ms', async () => {
    vi.useFakeTimers();
    const { store, seen } = counted(new MemoryStore({ sweepIntervalMs: 0 }), false);
    const engine = new Engine({ store });
    const held = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (held.kind !== 'acquired') throw new Error(held.kind);
    const waiting = engine.begin({ key: 'k', fingerprint: 'f', waitMs: 10_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    // Begins at 0, 10, 30, 70, 150, 310, 560 and 810 ms.
    expect(seen.begins).toBe(1 + 8);
    await held.claim.complete(response('first'));
    await vi.advanceTimersByTimeAsync(250);
    expect((await waiting).kind).toBe('replay');
  });
});

describe('Engine on a transactional store of its own', () => {
  /**
   * A store in transactional mode written against the Store contract: its `beginTransaction` gives the answers
   * listed, one per call (the last one again after), and claims with the transaction given. Every other method is
   * a MemoryStore's. `waits` writes down the `waitMs` each call was given.
   */
  function transactional(
    answers: readonly ('acquired' | 'inProgress' | Error)[],
    transaction: Partial<StoreTransaction> = {},
  ) {
    const memory = new MemoryStore();
    const waits: number[] = [];
    const store = over(memory, 'own', {
      beginTransaction: async (input): Promise<TransactionBeginResult> => {
        const answer = answers[Math.min(waits.length, answers.length - 1)]!;
        waits.push(input.waitMs);
        if (answer instanceof Error) throw answer;
        if (answer === 'inProgress') return { kind: 'inProgress', retryAfterMs: 1_000, attempt: 1 };
        return {
          kind: 'acquired',
          token: 1,
          attempt: 1,
          takeover: false,
          transaction: {
            handle: 'the transaction',
            signal: new AbortController().signal,
            commit: async () => {},
            rollback: async () => {},
            abort: async () => {},
            ...transaction,
          },
        };
      },
    });
    return { store, waits };
  }

  it('a transactional begin that fails is a StoreUnavailableError, reported as a storeError of begin', async () => {
    const events: OncelyEvent[] = [];
    const refused = new Error('connection refused');
    const { store } = transactional([refused]);
    const engine = new Engine({ store, onEvent: (event) => events.push(event) });
    const error = await engine.begin({ key: 'k', fingerprint: 'f' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).cause).toBe(refused);
    expect(events).toEqual([{ type: 'storeError', operation: 'begin', error }]);
  });

  it('a begin answered in progress before the deadline is asked again with what is left of waitMs', async () => {
    const { store, waits } = transactional(['inProgress', 'acquired']);
    const engine = new Engine({ store });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', waitMs: 2_000 });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await begun.claim.release();
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBe(2_000);
    // Not more than the caller's own wait (the store would hold it past its deadline), nor nothing.
    expect(waits[1]).toBeGreaterThan(1_000);
    expect(waits[1]).toBeLessThanOrEqual(2_000);
  });

  it('a transaction whose connection was lost before the claim was made hands the claim an aborted signal', async () => {
    const lost = new Error('connection lost');
    const { store } = transactional(['acquired'], { signal: AbortSignal.abort(lost) });
    const engine = new Engine({ store });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    expect(begun.claim.signal.aborted).toBe(true);
    expect(begun.claim.signal.reason).toBe(lost);
    await begun.claim.release();
  });

  it('a commit that fails with a driver error is a StoreUnavailableError carrying it, reported as a storeError of commit', async () => {
    const events: OncelyEvent[] = [];
    const reset = new Error('connection reset');
    const { store } = transactional(['acquired'], { commit: () => Promise.reject(reset) });
    const engine = new Engine({ store, onEvent: (event) => events.push(event) });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const error = await begun.claim.complete(response('x')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).cause).toBe(reset);
    expect(events.filter((event) => event.type === 'storeError')).toEqual([
      { type: 'storeError', operation: 'commit', error },
    ]);
  });

  it('a commit refused with an OncelyError of another kind passes it on as it is, and reports no storeError', async () => {
    const events: OncelyEvent[] = [];
    // (A TransactionEscapedError is settled by the claim first: test/unit/transaction-escaped.test.ts.)
    const escaped = new LeaseLostError(1);
    const { store } = transactional(['acquired'], { commit: () => Promise.reject(escaped) });
    const engine = new Engine({ store, onEvent: (event) => events.push(event) });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f' });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await expect(begun.claim.complete(response('x'))).rejects.toBe(escaped);
    expect(events.map((event) => event.type)).toEqual(['acquired']);
  });
});
