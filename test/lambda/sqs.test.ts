import type { Context, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/index.js';
import { type SqsRecordContext, sqsIdempotency } from '../../src/lambda/index.js';
import { PostgresStore, transactionOf } from '../../src/stores/postgres/index.js';
import { createTestSchema, type TestSchema } from '../postgres/support.js';
import {
  contextOf,
  downStores,
  postgresStore,
  redisStore,
  type StoreSetup,
  sleep,
  sqsEventOf,
  unique,
} from './support.js';

// SQS batches on the machine's Redis and PostgreSQL: each record takes effect once however often SQS delivers it,
// and the handler answers with the partial batch response (`batchItemFailures`) that makes SQS deliver again only
// the records that failed.

const stores: StoreSetup[] = [redisStore('sqs'), postgresStore('sqs')];

/** A record handler that counts runs per message id and throws for the ids in `failing` (once each by default). */
function recorder(failing: ReadonlyMap<string, number> = new Map()) {
  const runs = new Map<string, number>();
  const left = new Map(failing);
  const attempts: number[] = [];
  const handler = async (record: SQSRecord, { attempt }: { attempt: number }) => {
    runs.set(record.messageId, (runs.get(record.messageId) ?? 0) + 1);
    attempts.push(attempt);
    const failures = left.get(record.messageId) ?? 0;
    if (failures > 0) {
      left.set(record.messageId, failures - 1);
      throw new Error(`cannot process ${record.messageId} yet`);
    }
    return { shipped: record.messageId };
  };
  return { runs, attempts, handler };
}

describe.each(stores)('sqsIdempotency on $name', (setup) => {
  let store: Store;
  beforeAll(() => {
    store = setup.create();
  });

  it('a failing record is reported in batchItemFailures; the redelivery runs it alone, the others not again', async () => {
    const [a, b, c] = [unique('a'), unique('b'), unique('c')];
    const { runs, handler } = recorder(new Map([[b, 1]]));
    const consume = sqsIdempotency({ store })(handler);
    const batch = [{ id: a }, { id: b }, { id: c }];
    expect(await consume(sqsEventOf(batch), contextOf())).toEqual({
      batchItemFailures: [{ itemIdentifier: b }],
    });
    // SQS delivers the whole batch again (a visibility timeout that ran out, a function error elsewhere).
    expect(await consume(sqsEventOf(batch, { receiveCount: 2 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    expect(Object.fromEntries(runs)).toEqual({ [a]: 1, [b]: 2, [c]: 1 });
    // And once more: every record is a duplicate now.
    expect(await consume(sqsEventOf(batch, { receiveCount: 3 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    expect(Object.fromEntries(runs)).toEqual({ [a]: 1, [b]: 2, [c]: 1 });
  });

  it('a FIFO batch stops at its first failure: the records after it are reported too, and not run', async () => {
    const [a, b, c] = [unique('a'), unique('b'), unique('c')];
    const { runs, handler } = recorder(new Map([[b, 1]]));
    const consume = sqsIdempotency({ store })(handler);
    const batch = [{ id: a }, { id: b }, { id: c }];
    const first = await consume(sqsEventOf(batch, { fifo: true }), contextOf());
    expect(first).toEqual({ batchItemFailures: [{ itemIdentifier: b }, { itemIdentifier: c }] });
    expect(runs.has(c)).toBe(false);
    const again = await consume(
      sqsEventOf([{ id: b }, { id: c }], { fifo: true, receiveCount: 2 }),
      contextOf(),
    );
    expect(again).toEqual({ batchItemFailures: [] });
    expect(Object.fromEntries(runs)).toEqual({ [a]: 1, [b]: 2, [c]: 1 });
  });

  it('key: two messages that carry one event (a producer that sent it twice) take effect once', async () => {
    const { runs, handler } = recorder();
    const consume = sqsIdempotency({ store, key: (record) => JSON.parse(record.body).eventId })(handler);
    const eventId = unique('event');
    const body = JSON.stringify({ eventId });
    const batch = [
      { id: unique('m'), body },
      { id: unique('m'), body },
    ];
    expect(await consume(sqsEventOf(batch), contextOf())).toEqual({ batchItemFailures: [] });
    expect([...runs.values()]).toEqual([1]);
  });

  it('a record another invocation is processing right now is reported failed (busy), and deduplicated after', async () => {
    const id = unique('busy');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    // Two execution environments (two instances of the function), as concurrent deliveries land in.
    const environment = () =>
      sqsIdempotency({ store })(async () => {
        runs++;
        await gate;
      });
    const [consume, other] = [environment(), environment()];
    const first = consume(sqsEventOf([{ id }]), contextOf());
    await sleep(50);
    expect(await other(sqsEventOf([{ id }], { receiveCount: 2 }), contextOf())).toEqual({
      batchItemFailures: [{ itemIdentifier: id }],
    });
    release();
    expect(await first).toEqual({ batchItemFailures: [] });
    expect(await consume(sqsEventOf([{ id }], { receiveCount: 3 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    expect(runs).toBe(1);
  });

  it("a timed-out invocation's record is taken over by the next delivery once the invocation's time is up", async () => {
    const id = unique('timeout');
    const { attempts, handler } = recorder();
    // The first environment never answers, as an invocation Lambda kills at its timeout; SQS then delivers the
    // record to another environment of the function.
    const stuck = sqsIdempotency({ store, leaseMs: 60_000 })(() => new Promise<never>(() => {}));
    const consume = sqsIdempotency({ store, leaseMs: 60_000 })(handler);
    void stuck(sqsEventOf([{ id }]), contextOf(500));
    await sleep(150);
    expect(await consume(sqsEventOf([{ id }], { receiveCount: 2 }), contextOf())).toEqual({
      batchItemFailures: [{ itemIdentifier: id }],
    });
    await sleep(500);
    // The record's claim ended with the first invocation, not a whole leaseMs (60 s) later.
    expect(await consume(sqsEventOf([{ id }], { receiveCount: 3 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    expect(attempts).toEqual([2]);
  });

  it('the record handler gets the claim and the Lambda context of its own invocation', async () => {
    const seen: { token: number; requestId: string }[] = [];
    const consume = sqsIdempotency({ store })(
      async (_record, { token, lambda }: SqsRecordContext<Context>) => {
        seen.push({ token, requestId: lambda.awsRequestId });
      },
    );
    const [one, two] = [contextOf(), contextOf()];
    await Promise.all([
      consume(sqsEventOf([{ id: unique('m') }]), one),
      consume(sqsEventOf([{ id: unique('m') }]), two),
    ]);
    expect(seen.map((s) => s.requestId).sort()).toEqual([one.awsRequestId, two.awsRequestId].sort());
    expect(seen.every((s) => Number.isInteger(s.token))).toBe(true);
  });
});

describe('sqsIdempotency on PostgreSQL in transactional mode', () => {
  let schema: TestSchema;
  beforeAll(async () => {
    schema = await createTestSchema('lambda_sqs_tx', 4);
    await schema.pool.query(`CREATE TABLE ${schema.table('shipments')} (message_id text PRIMARY KEY)`);
  });
  afterAll(async () => {
    await schema?.drop();
  });

  it("the effect commits with the record; a timed-out invocation's transaction ends with it, and the next delivery runs", async () => {
    const store = new PostgresStore({ pool: schema.pool, schema: schema.schema }).transactional();
    const id = unique('tx');
    const ship = async (record: SQSRecord, context: SqsRecordContext) => {
      await transactionOf(context).query(`INSERT INTO ${schema.table('shipments')} VALUES ($1)`, [
        record.messageId,
      ]);
    };
    // A redelivery that hangs: it holds the record's transaction (its row lock) and the runs counter. Both end
    // with the invocation, not a whole leaseMs (60 s) later.
    const stuck = sqsIdempotency({ store, leaseMs: 60_000 })(async (record: SQSRecord, context) => {
      await ship(record, context);
      await new Promise(() => {});
    });
    const consume = sqsIdempotency({ store, leaseMs: 60_000 })(ship);
    void stuck(sqsEventOf([{ id }], { receiveCount: 2 }), contextOf(500));
    await sleep(150);
    expect(await consume(sqsEventOf([{ id }], { receiveCount: 3 }), contextOf())).toEqual({
      batchItemFailures: [{ itemIdentifier: id }],
    });
    await sleep(600);
    expect(await consume(sqsEventOf([{ id }], { receiveCount: 4 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    expect(await consume(sqsEventOf([{ id }], { receiveCount: 5 }), contextOf())).toEqual({
      batchItemFailures: [],
    });
    const rows = await schema.pool.query(
      `SELECT count(*)::int AS n FROM ${schema.table('shipments')} WHERE message_id = $1`,
      [id],
    );
    expect(rows.rows[0].n).toBe(1);
  });
});

describe('sqsIdempotency with the store down', () => {
  let down: Awaited<ReturnType<typeof downStores>>;
  beforeAll(async () => {
    down = await downStores();
  });
  afterAll(async () => {
    await down.close();
  });

  it.each(['redis', 'postgres'] as const)(
    '%s refusing connections: every record is reported, none runs',
    async (kind) => {
      let runs = 0;
      const consume = sqsIdempotency({ store: down[kind], breaker: false })(async () => {
        runs++;
      });
      const [a, b] = [unique('a'), unique('b')];
      expect(await consume(sqsEventOf([{ id: a }, { id: b }]), contextOf())).toEqual({
        batchItemFailures: [{ itemIdentifier: a }, { itemIdentifier: b }],
      });
      expect(runs).toBe(0);
    },
  );
});
