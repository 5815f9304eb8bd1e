import { describe, expect, it } from 'vitest';
import { isEscapedOutcome } from '../../src/core/escaped-outcome.js';
import { answerForError, replayAnswer } from '../../src/http/answers.js';
import {
  idempotent,
  isTransactionEscapedError,
  MemoryStore,
  type Store,
  TransactionEscapedError,
} from '../../src/index.js';
import type { StoreTransaction, TransactionBeginResult } from '../../src/store.js';
import { faulty, over } from './faulty-store.js';

// The core's half of an escaped transaction (issue 23, defect 4), on a real MemoryStore: the store refuses the
// settle with TransactionEscapedError; the claim completes the key with the escaped mark through Store.complete,
// and every later call meets the mark as TransactionEscapedError. The PostgreSQL store's half, and every escape
// form on a real database: test/postgres/transaction-escape-forms.test.ts.

type Escape = 'committed' | 'rolledBack';

/** A transactional store whose every transaction escapes: committed (the record stays in progress) or rolled back. */
function escaping(memory: Store, how: Escape): Store {
  return over(memory, 'escaping', {
    beginTransaction: async (input): Promise<TransactionBeginResult> => {
      const begun = await memory.begin(input);
      if (begun.kind !== 'acquired') return begun;
      const refuse = async () => {
        // A rolled-back escape leaves the record as it was before the claim: here, none.
        if (how === 'rolledBack') await memory.delete(input.key);
        throw new TransactionEscapedError(begun.token);
      };
      const transaction: StoreTransaction = {
        handle: 'the transaction',
        signal: new AbortController().signal,
        commit: refuse,
        rollback: refuse,
        abort: async () => {},
      };
      return { ...begun, transaction };
    },
  });
}

const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('a transactional claim whose store reports an escape', () => {
  for (const ending of ['returns', 'throws'] as const) {
    it(`committed, the handler ${ending}: the key keeps the failure, every later call gets it, one run`, async () => {
      const memory = new MemoryStore();
      let runs = 0;
      const pay = idempotent(
        async (id: string) => {
          runs += 1;
          if (ending === 'throws') throw new Error('declined');
          return id;
        },
        { store: escaping(memory, 'committed'), scope: `escaped-${ending}`, key: (id) => id },
      );
      const first = await errorOf(pay('a'));
      expect(first).toBeInstanceOf(TransactionEscapedError);
      expect(first).toMatchObject({ keyOutcome: 'terminal', replayed: false });
      for (let retry = 0; retry < 2; retry++) {
        const again = await errorOf(pay('a'));
        expect(isTransactionEscapedError(again)).toBe(true);
        expect(again).toMatchObject({ keyOutcome: 'terminal', replayed: true, token: undefined });
      }
      expect(runs).toBe(1);
    });
  }

  it('rolled back: nothing to keep, the fence refuses the mark, and the next call runs', async () => {
    let runs = 0;
    const pay = idempotent(
      async (id: string) => {
        runs += 1;
        return id;
      },
      { store: escaping(new MemoryStore(), 'rolledBack'), scope: 'rolled-back', key: (id) => id },
    );
    expect(await errorOf(pay('a'))).toMatchObject({ keyOutcome: 'released' });
    expect(await errorOf(pay('a'))).toMatchObject({ keyOutcome: 'released', replayed: false });
    expect(runs).toBe(2);
  });

  it('the mark cannot be stored (the store fails): the error says the key is left claimed', async () => {
    const memory = faulty(new MemoryStore());
    memory.fail.add('complete');
    const pay = idempotent(async (id: string) => id, {
      store: escaping(memory, 'committed'),
      scope: 'unknown',
      key: (id) => id,
    });
    expect(await errorOf(pay('a'))).toMatchObject({ keyOutcome: 'unknown' });
  });
});

describe('the escaped mark', () => {
  it('is no response a handler can store: its header name is not an HTTP token', () => {
    expect(isEscapedOutcome({ status: 0, headers: [[':oncely', 'transaction-escaped']] })).toBe(true);
    expect(isEscapedOutcome({ status: 0, headers: [['oncely', 'transaction-escaped']] })).toBe(false);
    expect(isEscapedOutcome({ status: 200, headers: [[':oncely', 'transaction-escaped']] })).toBe(false);
    expect(isEscapedOutcome({ status: 0, headers: [] })).toBe(false);
  });

  it('answers 500 transaction-escaped over HTTP, from the error and from a record read by the status route', () => {
    const fromError = answerForError(new TransactionEscapedError(7));
    const fromRecord = replayAnswer({
      retained: true,
      outcome: { status: 0, headers: [[':oncely', 'transaction-escaped']], body: new Uint8Array(0) },
    });
    for (const answer of [fromError!, fromRecord]) {
      expect(answer.status).toBe(500);
      const problem = JSON.parse(Buffer.from(answer.body).toString());
      expect(problem).toMatchObject({ status: 500, keyOutcome: 'terminal' });
      expect(problem.type).toMatch(/#transaction-escaped$/);
      expect(answer.headers.some(([name]) => name === 'retry-after')).toBe(false);
    }
    const released = answerForError(new TransactionEscapedError(7, { keyOutcome: 'released' }))!;
    expect(JSON.parse(Buffer.from(released.body).toString())).toMatchObject({ keyOutcome: 'released' });
  });
});
