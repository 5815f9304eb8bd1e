/**
 * @module The requests the DynamoDB benchmark meters, each through `idempotent()` on a `DynamoDbStore` made as its
 * page shows: a new key and its replay (with a small answer and with one of several KB), a duplicate while the
 * first call runs, another input under a completed key (a mismatch, against each record), and a call whose
 * handler throws (the key released) with the retry that claims it again.
 */
import { randomBytes } from 'node:crypto';
import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { scopedKey, validateKey } from '../../src/core/key.js';
import { idempotent, isOncelyError } from '../../src/index.js';
import type { DynamoDbStore } from '../../src/stores/dynamodb/index.js';
import type { Item } from '../../src/stores/dynamodb/item.js';
import { itemBytes } from '../../src/stores/dynamodb/size.js';
import type { Call } from './capacity.js';

/** One request kind: what it is, and how to run it once on fresh keys while `metered` records its calls. */
export interface RequestKind {
  readonly name: string;
  /** Runs the kind once; `metered(work)` records the calls `work` sends (and only those). */
  readonly run: (metered: <T>(work: () => Promise<T>) => Promise<T>, serial: number) => Promise<void>;
  /** The order id whose record the kind writes or meets. */
  readonly key: (serial: number) => string;
}

interface Order {
  readonly id: string;
  readonly amount: number;
  readonly answer: 'small' | 'large';
}

const SCOPE = 'pay';

/** A ~300-byte JSON answer, and one of 8 KB of base64 text (about 6 KB after the engine's brotli). */
const SMALL_NOTE = 'x'.repeat(220);
const largeNote = () => randomBytes(6_000).toString('base64');

/**
 * The request kinds on `store`. Each run uses keys of its own (`serial`), prepared outside the metering: the
 * record a replay or a mismatch meets is written first, unmetered.
 */
export function requestKinds(store: DynamoDbStore, run: string): RequestKind[] {
  // Handlers told to wait (the in-progress duplicate) or to throw (the released key), by order id.
  const gates = new Map<string, { started: () => void; until: Promise<void> }>();
  const failing = new Set<string>();
  const pay = idempotent(
    async (order: Order) => {
      const gate = gates.get(order.id);
      if (gate !== undefined) {
        gate.started();
        await gate.until;
      }
      if (failing.delete(order.id)) throw new Error('card declined');
      return {
        payment: `pay_${order.id}`,
        amount: order.amount,
        note: order.answer === 'small' ? SMALL_NOTE : largeNote(),
      };
    },
    { store, key: (order) => order.id, scope: SCOPE },
  );
  const id = (kind: string, serial: number) => `${run}-${kind}-${serial}`;
  const order = (kind: string, serial: number, answer: Order['answer'], amount = 1999): Order => ({
    id: id(kind, serial),
    amount,
    answer,
  });
  const refused = async (work: () => Promise<unknown>, code: string) => {
    try {
      await work();
    } catch (error) {
      if (isOncelyError(error) && error.code === code) return;
      throw error;
    }
    throw new Error(`expected ${code}`);
  };

  return [
    {
      name: 'new key, completed (a ~300-byte answer)',
      key: (n) => id('small', n),
      run: (metered, n) => metered(() => pay(order('small', n, 'small'))).then(() => {}),
    },
    {
      name: 'replay of it',
      key: (n) => id('small-replay', n),
      run: async (metered, n) => {
        await pay(order('small-replay', n, 'small'));
        const result = await metered(() => pay.execute(order('small-replay', n, 'small')));
        if (!result.replayed) throw new Error('expected a replay');
      },
    },
    {
      name: 'new key, completed (an 8 KB answer, ~6 KB stored after brotli)',
      key: (n) => id('large', n),
      run: (metered, n) => metered(() => pay(order('large', n, 'large'))).then(() => {}),
    },
    {
      name: 'replay of it',
      key: (n) => id('large-replay', n),
      run: async (metered, n) => {
        await pay(order('large-replay', n, 'large'));
        const result = await metered(() => pay.execute(order('large-replay', n, 'large')));
        if (!result.replayed) throw new Error('expected a replay');
      },
    },
    {
      name: 'duplicate while the first call runs (in progress)',
      key: (n) => id('busy', n),
      run: async (metered, n) => {
        const first = order('busy', n, 'small');
        let open!: () => void;
        let started!: () => void;
        const running = new Promise<void>((resolve) => {
          started = resolve;
        });
        gates.set(first.id, { started, until: new Promise((resolve) => (open = resolve)) });
        const firstCall = pay(first);
        await running;
        await metered(() => refused(() => pay(first), 'ONCELY_IN_PROGRESS'));
        open();
        await firstCall;
        gates.delete(first.id);
      },
    },
    {
      name: 'other input under a completed key (mismatch), the ~300-byte record',
      key: (n) => id('mismatch-small', n),
      run: async (metered, n) => {
        await pay(order('mismatch-small', n, 'small'));
        await metered(() =>
          refused(() => pay(order('mismatch-small', n, 'small', 2999)), 'ONCELY_FINGERPRINT_MISMATCH'),
        );
      },
    },
    {
      name: 'other input under a completed key (mismatch), the ~6 KB record',
      key: (n) => id('mismatch-large', n),
      run: async (metered, n) => {
        await pay(order('mismatch-large', n, 'large'));
        await metered(() =>
          refused(() => pay(order('mismatch-large', n, 'large', 2999)), 'ONCELY_FINGERPRINT_MISMATCH'),
        );
      },
    },
    {
      name: 'handler throws (the key released)',
      key: (n) => id('released', n),
      run: async (metered, n) => {
        const call = order('released', n, 'small');
        failing.add(call.id);
        await metered(() =>
          pay(call).then(
            () => {
              throw new Error('expected the handler to throw');
            },
            () => {},
          ),
        );
      },
    },
    {
      name: 'retry after the release (claimed again), completed',
      key: (n) => id('retried', n),
      run: async (metered, n) => {
        const call = order('retried', n, 'small');
        failing.add(call.id);
        await pay(call).catch(() => {});
        await metered(() => pay(call));
      },
    },
  ];
}

/** The bytes of the item an order id's record is stored in, as DynamoDB counts them (read without metering). */
export async function storedItemBytes(
  client: DynamoDBClient,
  table: string,
  orderId: string,
): Promise<number | undefined> {
  // The engine's storage key: the function's scope label and the key, hashed.
  const pk = scopedKey(`fn:${SCOPE}`, validateKey(orderId));
  const { Item: item } = await client.send(
    new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }),
  );
  return item === undefined ? undefined : itemBytes(item as Item);
}

/** Totals of a list of calls. */
export function totals(calls: readonly Call[]) {
  return {
    wcu: calls.reduce((sum, c) => sum + c.wcu, 0),
    rcu: calls.reduce((sum, c) => sum + c.rcu, 0),
    computedWcu: calls.reduce((sum, c) => sum + (c.computed ? c.wcu : 0), 0),
    /** The item the request's first refusal met, if it was refused with the item. */
    metBytes: calls.find((c) => c.refused)?.metBytes,
    sequence: calls.map((c) => (c.refused ? `${c.command} (refused)` : c.command)).join(' + '),
  };
}
