import { describe, expect, it } from 'vitest';
import { idempotent, isTransactionEscapedError } from '../../src/index.js';
import { scopedKey } from '../../src/store.js';
import { transactionOf } from '../../src/stores/postgres/index.js';
import { escapeFixture } from './escape-fixture.js';

// Issue 23, defects 3 and 4. Every way a transactional handler can end the claim's transaction itself, in both
// modes (a transaction of the store's own, and the caller's transaction joined through a savepoint), whether the
// handler then returns or throws. A COMMIT of any form makes the payment durable outside the claim: that key must
// never run again, so the attempt, an immediate retry and a retry after the lease all answer
// TransactionEscapedError, and there is one payment row. A ROLLBACK of any form undoes the claim and the payment
// with it: nothing committed, so the key is released (each call runs again), and no payment row. Such a call is
// refused too, except where nothing can tell it from a plain failed run: in the store's own transaction, `ROLLBACK
// AND CHAIN` or `ROLLBACK; BEGIN` and then a throw. The store's ROLLBACK then ends the chained transaction with
// everything written in it, exactly as it would have ended the claim's: the handler's own error reaches the caller.

const fixture = escapeFixture('escapeforms');

const LEASE_MS = 60_000;

type Client = ReturnType<typeof transactionOf>;

/** How a handler ends the claim's transaction: the statements it sends after (or around) its INSERT. */
interface Form {
  readonly name: string;
  readonly commits: boolean;
  /** Leaves a transaction open in place of the claim's, which the store's own ROLLBACK ends as its own. */
  readonly chains?: boolean;
  readonly run: (client: Client, insert: () => Promise<unknown>) => Promise<void>;
}

const FORMS: readonly Form[] = [
  {
    name: 'a bare COMMIT',
    commits: true,
    run: async (client, insert) => {
      await insert();
      await client.query('COMMIT');
    },
  },
  {
    name: 'a helper’s BEGIN … COMMIT',
    commits: true,
    run: async (client, insert) => {
      await client.query('BEGIN');
      await insert();
      await client.query('COMMIT');
    },
  },
  {
    name: 'COMMIT AND CHAIN',
    commits: true,
    run: async (client, insert) => {
      await insert();
      await client.query('COMMIT AND CHAIN');
    },
  },
  {
    name: '`COMMIT; BEGIN` as one string',
    commits: true,
    run: async (client, insert) => {
      await insert();
      await client.query('COMMIT; BEGIN');
    },
  },
  {
    name: '`END; BEGIN` as one string',
    commits: true,
    run: async (client, insert) => {
      await insert();
      await client.query('END; BEGIN');
    },
  },
  {
    // The outcome's statement then fails (25P02) in a transaction that is not the claim's: the record tells.
    name: 'COMMIT AND CHAIN, then a statement that fails (caught)',
    commits: true,
    run: async (client, insert) => {
      await insert();
      await client.query('COMMIT AND CHAIN');
      await client.query('SELECT 1 / 0').catch(() => undefined);
    },
  },
  {
    name: 'a bare ROLLBACK',
    commits: false,
    run: async (client, insert) => {
      await insert();
      await client.query('ROLLBACK');
    },
  },
  {
    name: 'ROLLBACK AND CHAIN',
    commits: false,
    chains: true,
    run: async (client, insert) => {
      await insert();
      await client.query('ROLLBACK AND CHAIN');
    },
  },
  {
    name: '`ROLLBACK; BEGIN` as one string',
    commits: false,
    chains: true,
    run: async (client, insert) => {
      await insert();
      await client.query('ROLLBACK; BEGIN');
    },
  },
];

type Mode = 'own' | 'joined';

/**
 * One call of a payment whose handler escapes by `form` and then returns or throws. Joined: the caller opens its
 * transaction, calls, commits on success and rolls back on an error, as docs/stores/postgres.md shows.
 */
function payment(mode: Mode, form: Form, ending: 'returns' | 'throws', scope: string) {
  let runs = 0;
  const handler = async (id: string, context: { readonly transaction?: unknown }) => {
    runs += 1;
    const client = transactionOf(context);
    await form.run(client, () => client.query(`INSERT INTO ${fixture.payments} (id) VALUES ($1)`, [id]));
    if (ending === 'throws') throw new Error('the card was declined after the escape');
    return { paid: id };
  };
  const options = { scope, key: (id: string) => id, leaseMs: LEASE_MS };
  const own = idempotent(handler, { ...options, store: fixture.store.transactional() });
  const call = async (id: string): Promise<unknown> => {
    if (mode === 'own') return own(id);
    const client = await fixture.db.pool.connect();
    try {
      await client.query('BEGIN');
      const joined = idempotent(handler, { ...options, store: fixture.store.transactional({ client }) });
      const paid = await joined(id);
      await client.query('COMMIT');
      return paid;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  };
  return { call, runs: () => runs, record: (id: string) => fixture.store.get(scopedKey(`fn:${scope}`, id)) };
}

const refusal = (call: Promise<unknown>) =>
  call.then(
    (value) => ({ refused: false, value }),
    (error: unknown) => ({ refused: isTransactionEscapedError(error), value: error }),
  );

let cases = 0;
for (const mode of ['own', 'joined'] as const) {
  describe(`${mode === 'own' ? 'the store’s own transaction' : 'the caller’s transaction, joined'}`, () => {
    for (const form of FORMS) {
      for (const ending of ['returns', 'throws'] as const) {
        cases += 1;
        const scope = `forms-${cases}`;
        if (form.commits) {
          it(`${form.name}, then the handler ${ending}: refused loudly on the attempt and on every retry, one payment`, async () => {
            const { call, runs, record } = payment(mode, form, ending, scope);
            const id = `${scope}-p`;
            expect(await refusal(call(id))).toMatchObject({ refused: true });
            expect(await fixture.rowsFor(id)).toBe(1);
            // Stored as the key's terminal outcome, not left in progress for a takeover to run again.
            expect((await record(id))?.state).toBe('completed');
            expect(await refusal(call(id))).toMatchObject({ refused: true });
            fixture.advance(2 * LEASE_MS);
            expect(await refusal(call(id))).toMatchObject({ refused: true });
            expect(runs()).toBe(1);
            expect(await fixture.rowsFor(id)).toBe(1);
          });
        } else {
          it(`${form.name}, then the handler ${ending}: refused loudly, nothing committed, the key released`, async () => {
            const { call, runs, record } = payment(mode, form, ending, scope);
            const id = `${scope}-r`;
            const first = await refusal(call(id));
            if (mode === 'own' && form.chains && ending === 'throws') {
              expect(first.value).toMatchObject({ message: 'the card was declined after the escape' });
            } else {
              expect(first).toMatchObject({ refused: true });
              expect(first.value).toMatchObject({ keyOutcome: 'released' });
            }
            expect(await fixture.rowsFor(id)).toBe(0);
            expect((await record(id))?.state).not.toBe('inProgress');
            expect((await record(id))?.state).not.toBe('completed');
            // Nothing took effect, so the next call runs (and ends the same way): no payment either.
            expect(await refusal(call(id))).toMatchObject({ refused: first.refused });
            expect(runs()).toBe(2);
            expect(await fixture.rowsFor(id)).toBe(0);
          });
        }
      }
    }
  });
}
