import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { messages } from '../../src/core/diagnostics-publish.js';
import { emitter, storeErrorsOnly, wanted } from '../../src/core/emit.js';
import { NO_EXECUTION, reporter } from '../../src/core/instrumentation.js';
import {
  DIAGNOSTICS_CHANNELS,
  type DiagnosticsMessages,
  Engine,
  type EngineOptions,
  idempotent,
  MemoryStore,
  type OncelyEvent,
  type Outcome,
  type Store,
} from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { faulty } from './faulty-store.js';

// The diagnostics channels are the engine's events for subscribers that pass nothing to oncely (an APM agent, a
// log shipper). Each case runs a real flow on a MemoryStore and asserts the exact messages.
const outcome: Outcome = { status: 201, headers: [], body: Buffer.from('done') };
const LEASE = 60_000;
type Name = keyof DiagnosticsMessages;
const NAMES = Object.values(DIAGNOSTICS_CHANNELS);

let undo: (() => void)[] = [];
afterEach(() => {
  for (const step of undo) step();
  undo = [];
  vi.restoreAllMocks();
});

/** Subscribes to `names` (all by default) and records what each publishes, in order. */
function listen(names: readonly Name[] = NAMES) {
  const seen: [Name, unknown][] = [];
  for (const name of names) {
    const onMessage = (message: unknown) => seen.push([name, message]);
    subscribe(name, onMessage);
    undo.push(() => unsubscribe(name, onMessage));
  }
  return seen;
}

function engineOn(store: Store, options: Partial<EngineOptions> = {}) {
  const events: OncelyEvent[] = [];
  const engine = new Engine({ store, leaseMs: LEASE, onEvent: (event) => events.push(event), ...options });
  return { engine, events };
}

describe('diagnostics channels', () => {
  it('have stable, namespaced names', () => {
    expect(DIAGNOSTICS_CHANNELS).toEqual({
      acquired: 'oncely:acquired',
      takeover: 'oncely:takeover',
      replayed: 'oncely:replayed',
      rejected: 'oncely:rejected',
      completed: 'oncely:completed',
      released: 'oncely:released',
      leaseLost: 'oncely:lease-lost',
      fenced: 'oncely:fenced',
      storeUnavailable: 'oncely:store-unavailable',
    });
  });

  it('a first run, a replay, a duplicate in flight and a reused key, with the scope and hashed key', async () => {
    const seen = listen();
    const clock = new FakeClock();
    const { engine } = engineOn(new MemoryStore({ clock: clock.now }));
    const scope = 'POST /payments';
    const first = await engine.begin({ key: 'k', fingerprint: 'f', scope });
    if (first.kind !== 'acquired') throw new Error(first.kind);
    const { token } = first.claim;
    clock.advance(1_000);
    await engine.begin({ key: 'k', fingerprint: 'f', scope });
    await engine.begin({ key: 'k', fingerprint: 'other', scope });
    await first.claim.complete(outcome);
    await engine.begin({ key: 'k', fingerprint: 'f', scope });
    expect(seen).toEqual([
      ['oncely:acquired', { key: 'k', scope, token, attempt: 1 }],
      ['oncely:rejected', { code: 'conflict', status: 409, key: 'k', scope, retryAfterMs: LEASE - 1_000 }],
      ['oncely:rejected', { code: 'mismatch', status: 422, key: 'k', scope, retryAfterMs: undefined }],
      ['oncely:completed', { key: 'k', scope, token }],
      ['oncely:replayed', { key: 'k', scope }],
    ]);
  });

  it('a release says why; a takeover has its attempt; the old owner is fenced', async () => {
    const seen = listen();
    const clock = new FakeClock();
    const { engine } = engineOn(new MemoryStore({ clock: clock.now }));
    const released = await engine.begin({ key: 'r', fingerprint: 'f', scope: 's' });
    if (released.kind !== 'acquired') throw new Error(released.kind);
    await released.claim.release('error');
    const first = await engine.begin({ key: 'k', fingerprint: 'f', scope: 's' });
    clock.advance(LEASE);
    const second = await engine.begin({ key: 'k', fingerprint: 'f', scope: 's' });
    if (first.kind !== 'acquired' || second.kind !== 'acquired') throw new Error('expected claims');
    await expect(first.claim.complete(outcome)).rejects.toThrow();
    await second.claim.release();
    const r = released.claim.token;
    expect(seen).toEqual([
      ['oncely:acquired', { key: 'r', scope: 's', token: r, attempt: 1 }],
      ['oncely:released', { key: 'r', scope: 's', token: r, reason: 'error' }],
      ['oncely:acquired', { key: 'k', scope: 's', token: first.claim.token, attempt: 1 }],
      ['oncely:takeover', { key: 'k', scope: 's', token: second.claim.token, attempt: 2 }],
      ['oncely:fenced', { key: 'k', scope: 's', token: first.claim.token, operation: 'complete' }],
      ['oncely:released', { key: 'k', scope: 's', token: second.claim.token, reason: 'notKept' }],
    ]);
  });

  it('a renewal the store fences: fenced, then lease lost', async () => {
    const seen = listen(['oncely:fenced', 'oncely:lease-lost']);
    const clock = new FakeClock();
    const store = new MemoryStore({ clock: clock.now });
    const { engine } = engineOn(store, { leaseMs: 30 });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', scope: 's', retentionMs: 60_000 });
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    const { signal, token } = begun.claim;
    clock.advance(31);
    await store.begin({ key: 'k', fingerprint: 'f', leaseMs: 60_000, retentionMs: 60_000 });
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    expect(seen).toEqual([
      ['oncely:fenced', { key: 'k', scope: 's', token, operation: 'renew' }],
      ['oncely:lease-lost', { key: 'k', scope: 's', token }],
    ]);
  });

  it('a store that fails: store unavailable, naming the operation, with the typed error', async () => {
    const seen = listen(['oncely:store-unavailable']);
    const store = faulty(new MemoryStore());
    const { engine } = engineOn(store, { breaker: false });
    store.fail.add('begin');
    await expect(engine.begin({ key: 'k', fingerprint: 'f' })).rejects.toThrow();
    expect(seen).toEqual([
      [
        'oncely:store-unavailable',
        { operation: 'begin', error: expect.objectContaining({ code: 'ONCELY_STORE_UNAVAILABLE' }) },
      ],
    ]);
  });

  it('every onEvent event is published on its channel, from the same call and in the same order', async () => {
    const seen = listen();
    const clock = new FakeClock();
    const { engine, events } = engineOn(new MemoryStore({ clock: clock.now }));
    const a = await engine.begin({ key: 'a', fingerprint: 'f' });
    await engine.begin({ key: 'a', fingerprint: 'f' });
    await engine.begin({ key: 'a', fingerprint: 'g' });
    if (a.kind !== 'acquired') throw new Error(a.kind);
    await a.claim.complete(outcome);
    await engine.begin({ key: 'a', fingerprint: 'f' });
    const b = await engine.begin({ key: 'b', fingerprint: 'f' });
    clock.advance(LEASE);
    const c = await engine.begin({ key: 'b', fingerprint: 'f' });
    if (b.kind !== 'acquired' || c.kind !== 'acquired') throw new Error('expected claims');
    await b.claim.release();
    await c.claim.release();
    const channelOf: Record<OncelyEvent['type'], Name> = {
      acquired: 'oncely:acquired',
      takeover: 'oncely:takeover',
      replayed: 'oncely:replayed',
      conflict: 'oncely:rejected',
      mismatch: 'oncely:rejected',
      completed: 'oncely:completed',
      released: 'oncely:released',
      fenced: 'oncely:fenced',
      leaseLost: 'oncely:lease-lost',
      storeError: 'oncely:store-unavailable',
    };
    expect(events.length).toBe(9);
    expect(seen.map(([name]) => name)).toEqual(events.map((event) => channelOf[event.type]));
    expect(seen.map(([, message]) => (message as { key?: string }).key)).toEqual(
      events.map((event) => ('key' in event ? event.key : undefined)),
    );
  });

  it('idempotent() scopes its messages by fn:<scope>, with the hashed key, never the raw one', async () => {
    const seen = listen(['oncely:acquired', 'oncely:replayed']);
    const charge = idempotent(async (order: { id: string }) => order.id, {
      key: (order) => order.id,
      scope: 'charge',
      store: new MemoryStore(),
    });
    await charge({ id: 'order-secret-1' });
    await charge({ id: 'order-secret-1' });
    expect(seen.map(([name, message]) => [name, (message as { scope: string }).scope])).toEqual([
      ['oncely:acquired', 'fn:charge'],
      ['oncely:replayed', 'fn:charge'],
    ]);
    expect(JSON.stringify(seen)).not.toContain('order-secret-1');
  });

  it('builds no message while nobody subscribes, and only the subscribed channel’s when one does', async () => {
    const built = [
      vi.spyOn(messages, 'event'),
      vi.spyOn(messages, 'rejected'),
      vi.spyOn(messages, 'replayed'),
    ];
    const calls = () => built.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    const clock = new FakeClock();
    const store = faulty(new MemoryStore({ clock: clock.now }));
    const { engine, events } = engineOn(store, { breaker: false });
    const flow = async (key: string) => {
      const begun = await engine.begin({ key, fingerprint: 'f', scope: 's' });
      await engine.begin({ key, fingerprint: 'f', scope: 's' });
      await engine.begin({ key, fingerprint: 'g', scope: 's' });
      if (begun.kind !== 'acquired') throw new Error(begun.kind);
      await begun.claim.complete(outcome);
      await engine.begin({ key, fingerprint: 'f', scope: 's' });
      const released = await engine.begin({ key: `${key}-r`, fingerprint: 'f' });
      if (released.kind === 'acquired') await released.claim.release('error');
      store.fail.add('begin');
      await engine.begin({ key: `${key}-x`, fingerprint: 'f' }).catch(() => {});
      store.fail.clear();
    };
    await flow('quiet');
    expect(events.length).toBe(8);
    expect(calls()).toBe(0);
    const seen = listen(['oncely:replayed']);
    await flow('heard');
    expect(seen).toEqual([['oncely:replayed', { key: 'heard', scope: 's' }]]);
    expect(calls()).toBe(1);
  });

  it('an event is built only when a hook, a probe or its channel’s subscriber wants it', () => {
    const bare = emitter(undefined);
    expect(wanted(bare, 'acquired')).toBe(false);
    expect(wanted(reporter(bare, NO_EXECUTION), 'completed')).toBe(false);
    listen(['oncely:acquired']);
    expect(wanted(bare, 'acquired')).toBe(true);
    expect(wanted(bare, 'completed')).toBe(false);
    expect(
      wanted(
        emitter(() => {}),
        'completed',
      ),
    ).toBe(true);
    const probe = { ...NO_EXECUTION, event: () => {} };
    expect(wanted(reporter(bare, probe), 'completed')).toBe(true);
    // An adapter's store-failure hook (its user hooks nothing) wants store errors alone.
    const heard: string[] = [];
    const quiet = emitter(storeErrorsOnly((event) => heard.push(event.operation)));
    expect(wanted(quiet, 'completed')).toBe(false);
    expect(wanted(quiet, 'acquired')).toBe(true); // its channel has a subscriber
    expect(wanted(quiet, 'storeError')).toBe(true);
    quiet({ type: 'completed', key: 'k', token: 1 });
    quiet({ type: 'storeError', operation: 'begin', error: new Error('down') });
    expect(heard).toEqual(['begin']);
  });
});
