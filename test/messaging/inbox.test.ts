import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import { actionFor, Inbox, type InboxOutcome } from '../../src/messaging/consumer.js';

interface Message {
  readonly id: string;
  readonly amount: number;
}

const inboxWith = (
  handler: (message: Message) => Promise<unknown> | unknown,
  extra: { maxAttempts?: number } = {},
) => {
  const parked: { id: string; attempts: number }[] = [];
  const inbox = new Inbox<Message, unknown>(handler, {
    store: new MemoryStore(),
    messageId: (m) => m.id,
    onParked: (m, info) => {
      parked.push({ id: m.id, attempts: info.attempts });
    },
    ...extra,
  });
  return { inbox, parked };
};

describe('Inbox', () => {
  it('runs a message once; a redelivery is a duplicate with the stored result', async () => {
    let runs = 0;
    const { inbox } = inboxWith(async (m) => {
      runs++;
      return { applied: m.amount, at: new Date(0) };
    });
    const first = await inbox.handle({ id: 'm1', amount: 5 });
    const second = await inbox.handle({ id: 'm1', amount: 5 });
    expect(first).toEqual({ kind: 'processed', result: { applied: 5, at: new Date(0) }, attempt: 1 });
    expect(second).toEqual({ kind: 'duplicate', result: { applied: 5, at: new Date(0) } });
    expect(runs).toBe(1);
    expect([first, second].map(actionFor)).toEqual(['ack', 'ack']);
  });

  it('a handler error stores nothing; after maxAttempts runs that did not finish, the message is parked', async () => {
    let runs = 0;
    const { inbox, parked } = inboxWith(
      () => {
        runs++;
        throw new Error(`boom ${runs}`);
      },
      { maxAttempts: 3 },
    );
    const outcomes: InboxOutcome<unknown>[] = [];
    for (let i = 0; i < 5; i++) outcomes.push(await inbox.handle({ id: 'poison', amount: 1 }));
    expect(outcomes.map((o) => o.kind)).toEqual(['failed', 'failed', 'failed', 'parked', 'parked']);
    expect(outcomes.slice(0, 3).map((o) => (o.kind === 'failed' ? o.attempt : 0))).toEqual([1, 2, 3]);
    expect(outcomes[3]).toEqual({ kind: 'parked', attempts: 3, first: true });
    expect(outcomes[4]).toMatchObject({ kind: 'parked', first: false });
    expect(outcomes.map(actionFor)).toEqual(['retry', 'retry', 'retry', 'deadLetter', 'deadLetter']);
    expect(runs).toBe(3);
    expect(parked).toEqual([{ id: 'poison', attempts: 3 }]);

    // Other messages are unaffected; a parked one runs again once forgotten.
    expect((await inbox.handle({ id: 'other', amount: 1 })).kind).toBe('failed');
    expect(await inbox.forget('poison')).toBe(true);
    expect((await inbox.handle({ id: 'poison', amount: 1 })).kind).toBe('failed');
    expect(runs).toBe(5);
  });

  it('a parking hook that throws leaves the message to be parked on the next delivery', async () => {
    let hookCalls = 0;
    const inbox = new Inbox<Message>(
      () => {
        throw new Error('always');
      },
      {
        store: new MemoryStore(),
        messageId: (m) => m.id,
        maxAttempts: 1,
        onParked: () => {
          hookCalls++;
          if (hookCalls === 1) throw new Error('dead-letter queue unreachable');
        },
      },
    );
    expect((await inbox.handle({ id: 'x', amount: 1 })).kind).toBe('failed');
    expect((await inbox.handle({ id: 'x', amount: 1 })).kind).toBe('failed');
    expect(await inbox.handle({ id: 'x', amount: 1 })).toEqual({ kind: 'parked', attempts: 2, first: true });
    expect(hookCalls).toBe(2);
  });

  it('a delivery that arrives while another consumer runs the message is busy, not run twice', async () => {
    let release = () => {};
    let runs = 0;
    const { inbox } = inboxWith(async () => {
      runs++;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return 'done';
    });
    const first = inbox.handle({ id: 'slow', amount: 1 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const second = await inbox.handle({ id: 'slow', amount: 1 });
    expect(second.kind).toBe('busy');
    expect(second.kind === 'busy' && second.retryAfterMs).toBeGreaterThan(0);
    expect(actionFor(second)).toBe('retry');
    release();
    expect((await first).kind).toBe('processed');
    expect(await inbox.handle({ id: 'slow', amount: 1 })).toEqual({ kind: 'duplicate', result: 'done' });
    expect(runs).toBe(1);
  });

  it('a message without a usable id is invalid (dead-lettered), never run', async () => {
    let runs = 0;
    const { inbox } = inboxWith(() => runs++);
    const outcome = await inbox.handle({ id: '', amount: 1 });
    expect(outcome.kind).toBe('invalid');
    expect(actionFor(outcome)).toBe('deadLetter');
    expect(runs).toBe(0);
  });

  it('scopes keep two consumers of one message apart', async () => {
    const store = new MemoryStore();
    const applied: string[] = [];
    const ledger = new Inbox<Message>(() => applied.push('ledger'), {
      store,
      messageId: (m) => m.id,
      scope: 'ledger',
    });
    const mailer = new Inbox<Message>(() => applied.push('mailer'), {
      store,
      messageId: (m) => m.id,
      scope: 'mailer',
    });
    for (const inbox of [ledger, mailer, ledger, mailer]) await inbox.handle({ id: 'e1', amount: 1 });
    expect(applied).toEqual(['ledger', 'mailer']);
  });

  it('validates options at construction', () => {
    const store = new MemoryStore();
    expect(() => new Inbox(() => 1, { store, messageId: 'id' as unknown as () => string })).toThrow(
      /messageId/,
    );
    expect(() => new Inbox(() => 1, { store, messageId: () => 'x', maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => new Inbox(() => 1, { store, messageId: () => 'x', scope: '' })).toThrow(/scope/);
    expect(() => new Inbox(() => 1, { store, messageId: () => 'x', retries: 1 } as never)).toThrow(
      /unknown option/,
    );
  });
});
