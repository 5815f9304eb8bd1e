import { describe, expect, it } from 'vitest';
import { Engine, Inbox, MemoryStore, type OncelyEvent } from '../../src/index.js';

// `leaseUntil` is the engine's side of a Lambda invocation's deadline: the lease never reaches past it, neither at
// begin nor by renewals, so a caller killed there leaves its key to the next one at once. The Lambda tests drive
// it through `context.getRemainingTimeInMillis()`; these pin the engine rule on the memory store.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('begin with leaseUntil', () => {
  it('the store lease ends at leaseUntil, not a whole leaseMs later', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, leaseMs: 60_000 });
    const until = Date.now() + 200;
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', leaseUntil: until });
    expect(begun.kind).toBe('acquired');
    const record = await store.get('k');
    expect(record?.leaseUntil).toBeLessThanOrEqual(until + 5);
    if (begun.kind === 'acquired') expect(begun.claim.deadline).toBeLessThanOrEqual(until);
    await sleep(until - Date.now() + 20);
    const next = await engine.begin({ key: 'k', fingerprint: 'f' });
    expect(next).toMatchObject({ kind: 'acquired' });
    if (next.kind === 'acquired') {
      expect(next.claim.takeover).toBe(true);
      await next.claim.release();
    }
    if (begun.kind === 'acquired') await begun.claim.release();
  });

  it('renewals of a live owner never carry the lease past leaseUntil, and its signal aborts there', async () => {
    const store = new MemoryStore();
    const events: OncelyEvent[] = [];
    // Renewed every 30 ms: without the cap the owner below would hold the key for as long as it runs.
    const engine = new Engine({ store, leaseMs: 90, retentionMs: 60_000, onEvent: (e) => events.push(e) });
    const until = Date.now() + 400;
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', leaseUntil: until });
    if (begun.kind !== 'acquired') throw new Error('expected a claim');
    const aborted = new Promise<number>((resolve) =>
      begun.claim.signal.addEventListener('abort', () => resolve(Date.now())),
    );
    await sleep(200);
    // Mid-way the owner still holds the key: the renewals keep it alive up to the cap.
    expect(await engine.begin({ key: 'k', fingerprint: 'f' })).toMatchObject({ kind: 'inProgress' });
    expect(events.some((e) => e.type === 'acquired')).toBe(true);
    const abortedAt = await aborted;
    expect(abortedAt).toBeGreaterThanOrEqual(until - 1);
    expect(abortedAt).toBeLessThan(until + 100);
    await sleep(20);
    const next = await engine.begin({ key: 'k', fingerprint: 'f' });
    expect(next).toMatchObject({ kind: 'acquired' });
    if (next.kind === 'acquired') await next.claim.release();
    await begun.claim.release();
  });

  it('a leaseUntil already past still claims (1 ms lease) and the claim is lost at once', async () => {
    const engine = new Engine({ store: new MemoryStore() });
    const begun = await engine.begin({ key: 'k', fingerprint: 'f', leaseUntil: Date.now() - 5 });
    if (begun.kind !== 'acquired') throw new Error('expected a claim');
    expect(begun.claim.signal.aborted).toBe(true);
    await begun.claim.release();
  });

  it('Inbox#handle passes leaseUntil to the message claim', async () => {
    const store = new MemoryStore();
    let release!: () => void;
    const hang = new Promise<void>((resolve) => (release = resolve));
    const inbox = new Inbox(async (_message: string) => hang, {
      store,
      messageId: (message) => message,
      leaseMs: 60_000,
    });
    const until = Date.now() + 150;
    const first = inbox.handle('m-1', { leaseUntil: until });
    await sleep(until - Date.now() + 30);
    // The first delivery's process "died" at its deadline: the redelivery takes the message over and runs it.
    const second = new Inbox(async () => 'ran again', {
      store,
      messageId: (message: string) => message,
    });
    expect(await second.handle('m-1')).toMatchObject({ kind: 'processed', attempt: 2 });
    release();
    await first;
  });
});
